// What the fuzz targets share: a property that must hold on every input, checked so that a
// failure stops the fuzzer with the input saved, as a crash would.
#pragma once

#include <cstdio>
#include <cstdlib>

// Aborts with `what` when `holds` is false: libFuzzer counts the abort as a crash and keeps the
// input that caused it, so the broken property is reproduced by running the target on that file.
#define FUZZ_CHECK(holds, what)                                                               \
  do {                                                                                        \
    if (!(holds)) {                                                                           \
      std::fprintf(stderr, "fuzz property broken: %s (%s:%d)\n", (what), __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
