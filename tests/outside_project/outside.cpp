// An outside program on tandem's C++ API: one small dgemm (B transposed), checked against
// products worked out by hand. Exit 0 when right.
#include <cstdio>
#include <tandem/tandem.hpp>
#include <vector>

int main() {
  // A is 2x3; B is stored as its 2x3 transpose; C = A B^T.
  const std::vector<double> a{1, 2, 3, 4, 5, 6}, bt{7, 9, 11, 8, 10, 12};
  const std::vector<double> want{58, 64, 139, 154};
  std::vector<double, tandem::Allocator<double>> c(4, 0.0);
  try {
    tandem::gemm<double>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::Trans, 2, 2, 3,
                         1.0, a.data(), 3, bt.data(), 3, 0.0, c.data(), 2);
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "outside C++: %s\n", e.what());
    return 1;
  }
  for (size_t i = 0; i < want.size(); ++i)
    if (c[i] != want[i]) {
      std::fprintf(stderr, "outside C++: c[%zu] = %g, not %g\n", i, c[i], want[i]);
      return 1;
    }
  std::printf("outside C++: tandem::gemm ok\n");
  return 0;
}
