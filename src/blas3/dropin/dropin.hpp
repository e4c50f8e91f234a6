// What the drop-in's two files share (src/blas3/dropin/gemm_entries.cpp: gemm and the routing rule;
// src/blas3/dropin/level3_entries.cpp: the other level-3 routines): the threshold, and how a BLAS
// routine reports an invalid argument or survives a failure.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>

#include "base/precision.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::dropin {

// Whether a product of this size and precision stays on the CPU BLAS whatever the strategy: its
// work in real multiply-adds (m*n*k, or 4*m*n*k for a complex one) is below TANDEM_MIN_MNK.
bool below_threshold(Precision precision, int64_t m, int64_t n, int64_t k);

// A BLAS routine has no status to return, so a call that fails must still compute C: a GPU
// failure (even under TANDEM_STRATEGY=gpu) is retried on the CPU by `on_cpu`, with one warning.
// The retry starts from C as the caller gave it: tandem::gemm throws only with C untouched (a
// device failing once rows of C were written leaves the rest to the CPU and returns), so no row
// gets beta C twice. Only C lost to a GPU that failed after writing it in place is fatal:
// carrying on would hand back wrong numbers.
[[noreturn]] void fatal(const char* routine, const char* what);
void recover(const char* routine, const std::exception& e, const std::function<void()>& on_cpu);

// An invalid argument, as the reference BLAS reports it: xerbla_ with the routine's 6-character
// name and the Fortran position.
void fortran_invalid(const char* name, int position);
// As the reference CBLAS: the position and routine name.
void cblas_invalid(const char* routine, int position);

// The invalid argument a tandem::Error named, taken in its handler and reported after it: a
// program's xerbla_ may not return (R's longjmps to R's prompt), and a jump out of a C++ handler
// leaves the exception caught for good (std::current_exception() still gives it), so xerbla is
// called only where no handler, and no object with a destructor, is left on tandem's frames.
struct Invalid {
  bool found = false;
  int position = 0;
  void take(const Error& e) {
    found = true;
    position = e.argument();
  }
};

// Options that keep a call on the CPU (the retry after a failure).
Options cpu_only();

}  // namespace tandem::detail::dropin
