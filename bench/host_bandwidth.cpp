// The host's memory bandwidth, for the arithmetic of what a batch of small products can reach
// (issue 43): each of T threads streams over its own 256 MiB, reading (a sum), writing (a fill)
// and copying (memcpy, counted as read plus write), best of 5 passes after one untimed, for T in
// THREADS. One line per count: GB/s of memory traffic each way.
//
//   host_bandwidth [THREADS]     e.g. host_bandwidth 1,4,8,16
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBytes = size_t{256} << 20;  // per thread

// Seconds for every thread to run `f(i)` once, all started together.
template <class F>
double timed(int threads, F&& f) {
  std::vector<std::thread> pool;
  const auto t0 = Clock::now();
  for (int i = 0; i < threads; ++i) pool.emplace_back([&, i] { f(i); });
  for (auto& t : pool) t.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts;
  std::stringstream in(argc > 1 ? argv[1] : "1,4,8,16");
  for (std::string item; std::getline(in, item, ',');) counts.push_back(std::atoi(item.c_str()));
  const int most = *std::max_element(counts.begin(), counts.end());
  std::vector<std::vector<double>> src(most), dst(most);
  timed(most, [&](int i) {  // first touch on the thread that uses it
    src[i].assign(kBytes / sizeof(double), 1.0);
    dst[i].assign(kBytes / sizeof(double), 0.0);
  });
  std::vector<double> sums(most);
  for (int threads : counts) {
    double read = 1e30, write = 1e30, copy = 1e30;
    for (int pass = -1; pass < 5; ++pass) {
      const double r = timed(threads, [&](int i) {
        // Eight sums, so the adds' latency does not bound the loop.
        double s[8] = {};
        const std::vector<double>& v = src[i];
        for (size_t j = 0; j + 8 <= v.size(); j += 8)
          for (int k = 0; k < 8; ++k) s[k] += v[j + k];
        sums[i] = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
      });
      const double w = timed(threads, [&](int i) { std::fill(dst[i].begin(), dst[i].end(), 2.0); });
      const double c =
          timed(threads, [&](int i) { std::memcpy(dst[i].data(), src[i].data(), kBytes); });
      if (pass >= 0) read = std::min(read, r), write = std::min(write, w), copy = std::min(copy, c);
    }
    const double gb = static_cast<double>(kBytes) * threads * 1e-9;
    std::printf(
        "{\"threads\": %d, \"read_GBps\": %.1f, \"write_GBps\": %.1f, "
        "\"copy_GBps\": %.1f, \"check\": %.0f}\n",
        threads, gb / read, gb / write, 2 * gb / copy, sums[0]);
  }
  return 0;
}
