// The C interface: each invalid argument reported by its 1-based position with C untouched, the
// per-thread error text, runtime errors as negative values, tandem_malloc's alignment, and the
// version.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

namespace {

struct Call {
  int layout = TANDEM_ROW_MAJOR, ta = TANDEM_NO_TRANS, tb = TANDEM_NO_TRANS;
  int64_t m = 4, n = 5, k = 3;
  float alpha = 1;
  const float* a;
  int64_t lda = 3;
  const float* b;
  int64_t ldb = 5;
  float beta = 0;
  float* c;
  int64_t ldc = 5;
};

class ApiArguments : public ::testing::Test {
 protected:
  std::vector<float> a = std::vector<float>(64, 1.0f), b = std::vector<float>(64, 2.0f),
                     c = std::vector<float>(64, 42.0f);
  Call base() {
    return Call{TANDEM_ROW_MAJOR,
                TANDEM_NO_TRANS,
                TANDEM_NO_TRANS,
                4,
                5,
                3,
                1.0f,
                a.data(),
                3,
                b.data(),
                5,
                0.0f,
                c.data(),
                5};
  }
  int run(const Call& x) {
    return tandem_sgemm(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb,
                        x.beta, x.c, x.ldc);
  }
  void expect_rejected(const Call& x, int position, const char* name) {
    const std::vector<float> before = c;
    EXPECT_EQ(run(x), position) << name;
    EXPECT_EQ(c, before) << name << ": C was touched";
    const std::string msg = tandem_last_error();
    EXPECT_NE(msg.find(std::string("(") + name + ")"), std::string::npos) << msg;
    EXPECT_NE(msg.find("argument " + std::to_string(position)), std::string::npos) << msg;
  }
};

TEST_F(ApiArguments, ValidCallSucceedsAndClearsTheError) {
  Call x = base();
  x.layout = 7;
  ASSERT_NE(run(x), 0);
  EXPECT_STRNE(tandem_last_error(), "");
  EXPECT_EQ(run(base()), 0);
  EXPECT_STREQ(tandem_last_error(), "");
  EXPECT_EQ(c[0], 6.0f);  // 3 * 1 * 2
}

TEST_F(ApiArguments, EachPositionIsReported) {
  Call x;
  x = base();
  x.layout = 100;
  expect_rejected(x, 1, "layout");
  x = base();
  x.ta = 114;
  expect_rejected(x, 2, "trans_a");
  x = base();
  x.tb = 0;
  expect_rejected(x, 3, "trans_b");
  x = base();
  x.m = -1;
  expect_rejected(x, 4, "m");
  x = base();
  x.n = -2;
  expect_rejected(x, 5, "n");
  x = base();
  x.k = -3;
  expect_rejected(x, 6, "k");
  x = base();
  x.a = nullptr;
  expect_rejected(x, 8, "a");
  x = base();
  x.lda = 2;
  expect_rejected(x, 9, "lda");
  x = base();
  x.b = nullptr;
  expect_rejected(x, 10, "b");
  x = base();
  x.ldb = 4;
  expect_rejected(x, 11, "ldb");
  x = base();
  x.c = nullptr;
  expect_rejected(x, 13, "c");
  x = base();
  x.ldc = 4;
  expect_rejected(x, 14, "ldc");
}

TEST_F(ApiArguments, LeadingDimensionsFollowLayoutAndTranspose) {
  // Column-major A (m x k, no transpose) needs lda >= m; transposed it needs lda >= k.
  Call x = base();
  x.layout = TANDEM_COL_MAJOR;
  x.lda = 4;
  x.ldb = 3;
  x.ldc = 4;
  EXPECT_EQ(run(x), 0) << tandem_last_error();
  x.lda = 3;
  expect_rejected(x, 9, "lda");
  x = base();
  x.ta = TANDEM_TRANS;  // row-major A stored k x m: lda >= m = 4
  x.lda = 3;
  expect_rejected(x, 9, "lda");
  x.lda = 4;
  EXPECT_EQ(run(x), 0) << tandem_last_error();
  x = base();
  x.tb = TANDEM_CONJ_TRANS;  // row-major B stored n x k: ldb >= k = 3
  x.ldb = 3;
  EXPECT_EQ(run(x), 0) << tandem_last_error();
  x.ldb = 2;
  expect_rejected(x, 11, "ldb");
}

TEST_F(ApiArguments, FirstInvalidArgumentWins) {
  Call x = base();
  x.m = -1;
  x.ldc = 0;
  x.c = nullptr;
  expect_rejected(x, 4, "m");
}

TEST_F(ApiArguments, PointersAreOnlyRequiredWhenRead) {
  Call x = base();
  x.alpha = 0;
  x.a = nullptr;
  x.b = nullptr;
  EXPECT_EQ(run(x), 0) << tandem_last_error();  // alpha = 0: A and B are not read
  x = base();
  x.m = 0;
  x.c = nullptr;
  x.a = nullptr;
  EXPECT_EQ(run(x), 0) << tandem_last_error();  // empty C
}

TEST_F(ApiArguments, DoublePrecisionChecksToo) {
  std::vector<double> d(64, 1.0);
  EXPECT_EQ(tandem_dgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 4, 5, 3, 1.0, d.data(),
                         3, d.data(), 5, 0.0, d.data() + 32, 4),
            14);
}

TEST_F(ApiArguments, TooLargeForTheCpuBlasIsARuntimeError) {
  Call x = base();
  x.ldc = int64_t{1} << 33;
  EXPECT_EQ(run(x), TANDEM_ERROR_TOO_LARGE);
  EXPECT_NE(std::string(tandem_last_error()).find("32-bit"), std::string::npos);
}

TEST(ApiErrors, LastErrorIsPerThread) {
  std::vector<float> buf(16, 0.0f);
  ASSERT_EQ(tandem_sgemm(5, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 1, 1, 1, 1.0f, buf.data(), 1,
                         buf.data(), 1, 0.0f, buf.data(), 1),
            1);
  std::string other;
  std::thread t([&] { other = tandem_last_error(); });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(tandem_last_error()), "");
}

TEST(ApiErrors, CppInterfaceThrowsTandemError) {
  std::vector<double> buf(16, 0.0);
  try {
    tandem::gemm<double>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, 2, 2,
                         2, 1.0, buf.data(), 1, buf.data(), 2, 0.0, buf.data(), 2);
    FAIL() << "expected tandem::Error";
  } catch (const tandem::Error& e) {
    EXPECT_EQ(e.kind(), tandem::Error::Kind::InvalidArgument);
    EXPECT_EQ(e.argument(), 9);
    EXPECT_NE(std::string(e.what()).find("lda"), std::string::npos);
  }
  tandem::Options bad;
  bad.strategy = tandem::Strategy::Hybrid;
  bad.gpu_fraction = 1.5;
  EXPECT_THROW(
      tandem::gemm<double>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, 2, 2,
                           2, 1.0, buf.data(), 2, buf.data(), 2, 0.0, buf.data() + 8, 2, bad),
      tandem::Error);
}

TEST(Malloc, AlignedAndPadded) {
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{64}, size_t{4097}, size_t{1} << 20}) {
    void* p = tandem_malloc(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
    // The padding up to a multiple of 64 bytes is usable memory.
    std::memset(p, 0xab, (bytes + 63) / 64 * 64);
    tandem_free(p);
  }
  EXPECT_EQ(tandem_malloc(0), nullptr);
  tandem_free(nullptr);
  std::vector<float, tandem::Allocator<float>> v(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 4096, 0u);
}

// The library's version is the header's, and the string is the three numbers.
TEST(Version, LibraryAndHeaderAgree) {
  EXPECT_STREQ(tandem_version(), TANDEM_VERSION_STRING);
  EXPECT_EQ(std::string(tandem_version()), std::to_string(TANDEM_VERSION_MAJOR) + "." +
                                               std::to_string(TANDEM_VERSION_MINOR) + "." +
                                               std::to_string(TANDEM_VERSION_PATCH));
}

}  // namespace
