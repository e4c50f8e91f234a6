// The batch benches' cases (bench/batch_bench, bench/clblast_batch, bench/batch_timeline,
// bench/batch_choice): PRECISION:N:COUNT, comma-separated; a strided batch of COUNT row-major N^3
// products. PRECISION is one of the letters the bench takes (s and d, or s, d, c and z).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

struct BatchCase {
  char precision = 's';
  int64_t n = 0, count = 0;
};

// The cases `text` lists, each precision one of `precisions`; a malformed one ends the program
// with status 2.
inline std::vector<BatchCase> parse_batch_cases(const std::string& text,
                                                const std::string& precisions = "sd") {
  std::vector<BatchCase> cases;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char p = 0;
    long long n = 0, count = 0;
    if (std::sscanf(item.c_str(), "%c:%lld:%lld", &p, &n, &count) != 3 ||
        precisions.find(p) == std::string::npos || n < 1 || count < 1) {
      std::fprintf(stderr, "bad case %s (PRECISION:N:COUNT, PRECISION one of %s)\n", item.c_str(),
                   precisions.c_str());
      std::exit(2);
    }
    cases.push_back({p, n, count});
  }
  return cases;
}
