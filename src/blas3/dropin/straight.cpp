// The drop-in's straight-path table (src/blas3/dropin/straight.hpp): constant until the drop-in has
// read its settings, then published once.
#include "blas3/dropin/straight.hpp"

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

namespace {

constexpr TandemStraight initial() {
  TandemStraight t{};
  const char upper[] = {'N', 'T', 'C'};
  const int op[] = {TANDEM_NO_TRANS, TANDEM_TRANS, TANDEM_CONJ_TRANS};
  for (int i = 0; i < 3; ++i) {
    t.fortran_op[static_cast<unsigned char>(upper[i])] = op[i];
    t.fortran_op[static_cast<unsigned char>(upper[i] - 'A' + 'a')] = op[i];
  }
  return t;
}

}  // namespace

// Constant-initialised: an entry called before any constructor runs reads a bound of 0.
extern "C" {
TandemStraight tandem_straight = initial();
}

namespace tandem::detail::dropin::straight {

namespace {

// One precision's row of the table.
template <class T>
void publish_row(void* (*find)(const char* name)) {
  tandem_straight.*Row<T>::level3 = blas_entries::found<T>(find);
  if constexpr (is_complex(precision_of<T>()))
    tandem_straight.*HermitianRow<T>::hermitian = blas_entries::found_hermitian<T>(find);
}

}  // namespace

void publish_level3(void* (*find)(const char* name)) {
  publish_row<float>(find);
  publish_row<double>(find);
  publish_row<std::complex<float>>(find);
  publish_row<std::complex<double>>(find);
}

void publish_gemm(Precision precision, void* fortran, void* cblas) {
  tandem_straight.own_gemm[index_of(precision)] = fortran;
  tandem_straight.own_cblas_gemm[index_of(precision)] = cblas;
}

void publish(double threshold) {
  // A whole product is below `threshold` exactly when it is at most its ceiling less one.
  const double least = std::ceil(threshold);
  const std::uint64_t most =
      !(least > 1)      ? 0
      : least >= 0x1p63 ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                        : static_cast<std::uint64_t>(least) - 1;
  __atomic_store_n(&tandem_straight.most, most, __ATOMIC_RELEASE);
}

}  // namespace tandem::detail::dropin::straight
