// For a test program that links libtandem_blas.so: defines xerbla_ and cblas_xerbla itself
// (exported, as the reference testers do), so every invalid argument a routine reports lands
// here instead of ending the program: the routine's name, the position, and how many reports.
// Where g_jump is set, a report then ends in longjmp there, once, as R's xerbla_ does (it
// longjmps to R's prompt). Include it in one file of the program.
#pragma once

#include <cblas.h>

#include <csetjmp>
#include <cstddef>
#include <string>

namespace xerbla_recorder {
inline std::string g_routine;
inline int g_info = 0;
inline int g_calls = 0;
inline std::jmp_buf* g_jump = nullptr;

inline void jump_if_asked() {
  if (std::jmp_buf* to = g_jump) {
    g_jump = nullptr;
    std::longjmp(*to, 1);
  }
}

inline void reset() {
  g_routine.clear();
  g_info = 0;
  g_calls = 0;
}
}  // namespace xerbla_recorder

extern "C" void xerbla_(const char* name, const blasint* info, std::size_t len) {
  xerbla_recorder::g_routine.assign(name, len);
  xerbla_recorder::g_info = *info;
  ++xerbla_recorder::g_calls;
  xerbla_recorder::jump_if_asked();
}

extern "C" void cblas_xerbla(blasint info, char* rout, char*, ...) {
  xerbla_recorder::g_routine = rout;
  xerbla_recorder::g_info = info;
  ++xerbla_recorder::g_calls;
  xerbla_recorder::jump_if_asked();
}
