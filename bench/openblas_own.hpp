// For benchmarks that link libtandem_blas.so first (so cblas_* and sgemm_ are tandem's): OpenBLAS's
// own entry points, from the library that defines openblas_get_config (a name tandem does not
// export). Exits with a message when one cannot be found.
#pragma once

#include <cblas.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

template <class F>
F openblas_own(const char* name) {
  static void* const lib = []() -> void* {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) == 0) return nullptr;
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  }();
  auto* f = lib != nullptr ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
  if (f == nullptr) {
    std::fprintf(stderr, "cannot find OpenBLAS's %s\n", name);
    std::exit(1);
  }
  return f;
}
