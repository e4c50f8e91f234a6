// detail::Precision (src/base/precision.hpp): each precision's facts, its routines' names, reading
// one from its letter, and the precisions of the element types.
#include "base/precision.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tandem::detail::Precision;
namespace detail = tandem::detail;

// The names are built at compile time where their parts are known then.
static_assert(detail::routine_name(Precision::s, "gemm").c_str()[0] == 's');
static_assert(detail::precision_of<std::complex<double>>() == Precision::z);
static_assert(detail::element_bytes(Precision::c) == sizeof(std::complex<float>));

struct Facts {
  Precision precision;
  char letter;
  int index;
  bool complex;
  Precision real;
  size_t bytes;
  bool fp64;
  int flops;
};

TEST(Precision, EachPrecisionsFacts) {
  const std::vector<Facts> table = {
      {Precision::s, 's', 0, false, Precision::s, sizeof(float), false, 2},
      {Precision::d, 'd', 1, false, Precision::d, sizeof(double), true, 2},
      {Precision::c, 'c', 2, true, Precision::s, sizeof(std::complex<float>), false, 8},
      {Precision::z, 'z', 3, true, Precision::d, sizeof(std::complex<double>), true, 8}};
  ASSERT_EQ(std::size(detail::kPrecisions), table.size());
  ASSERT_EQ(detail::kPrecisionCount, static_cast<int>(table.size()));
  for (size_t i = 0; i < table.size(); ++i) {
    const Facts& f = table[i];
    SCOPED_TRACE(f.letter);
    EXPECT_EQ(detail::kPrecisions[i], f.precision) << "BLAS's order: s, d, c, z";
    EXPECT_EQ(detail::letter(f.precision), f.letter);
    EXPECT_EQ(detail::index_of(f.precision), f.index);
    EXPECT_EQ(detail::is_complex(f.precision), f.complex);
    EXPECT_EQ(detail::real_of(f.precision), f.real);
    EXPECT_EQ(detail::element_bytes(f.precision), f.bytes);
    EXPECT_EQ(detail::needs_fp64(f.precision), f.fp64);
    EXPECT_EQ(detail::flops_per_multiply_add(f.precision), f.flops);
  }
}

TEST(Precision, OfEachElementType) {
  EXPECT_EQ(detail::precision_of<float>(), Precision::s);
  EXPECT_EQ(detail::precision_of<double>(), Precision::d);
  EXPECT_EQ(detail::precision_of<std::complex<float>>(), Precision::c);
  EXPECT_EQ(detail::precision_of<std::complex<double>>(), Precision::z);
}

TEST(Precision, RoutineNames) {
  EXPECT_STREQ(detail::routine_name(Precision::s, "gemm").c_str(), "sgemm");
  EXPECT_STREQ(detail::routine_name(Precision::z, "herk").c_str(), "zherk");
  EXPECT_EQ(detail::routine_name(Precision::d, "syr2k").str(), "dsyr2k");
  EXPECT_STREQ(detail::cblas_name(Precision::d, "trsm").c_str(), "cblas_dtrsm");
  EXPECT_STREQ(detail::cblas_name(Precision::c, "gemm").c_str(), "cblas_cgemm");
  EXPECT_STREQ(detail::fortran_symbol(Precision::s, "syrk").c_str(), "ssyrk_");
  EXPECT_STREQ(detail::fortran_symbol(Precision::z, "gemm").c_str(), "zgemm_");
  // xerbla_'s names: upper case, padded to six, as the reference BLAS's routines pass them.
  EXPECT_STREQ(detail::xerbla_name(Precision::s, "gemm").c_str(), "SGEMM ");
  EXPECT_STREQ(detail::xerbla_name(Precision::d, "syr2k").c_str(), "DSYR2K");
  EXPECT_STREQ(detail::xerbla_name(Precision::c, "her2k").c_str(), "CHER2K");
  EXPECT_STREQ(detail::xerbla_name(Precision::z, "trmm").c_str(), "ZTRMM ");
}

TEST(Precision, ReadFromItsLetter) {
  for (Precision p : detail::kPrecisions) {
    EXPECT_EQ(detail::parse_precision(std::string(1, detail::letter(p))), p);
    EXPECT_EQ(detail::precision_from_letter(std::string(1, detail::letter(p))), p);
  }
  for (const char* wrong : {"", "x", "S", "sd", "both", "single"}) {
    EXPECT_FALSE(detail::precision_from_letter(wrong)) << wrong;
    try {
      detail::parse_precision(wrong);
      ADD_FAILURE() << "'" << wrong << "' was read as a precision";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("'") + wrong + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("s, d, c and z"), std::string::npos) << what;
    }
  }
}

// A map keyed by precision lists them as one keyed by their letters: what prints a profile's
// sections, and the order the sections were always printed in, rest on it.
TEST(Precision, MapsListThemInTheLettersOrder) {
  std::map<Precision, int> by_precision;
  std::map<char, int> by_letter;
  for (Precision p : detail::kPrecisions) {
    by_precision[p] = detail::index_of(p);
    by_letter[detail::letter(p)] = detail::index_of(p);
  }
  std::string precisions, letters;
  for (const auto& [p, i] : by_precision) precisions += detail::letter(p);
  for (const auto& [c, i] : by_letter) letters += c;
  EXPECT_EQ(precisions, letters);
  EXPECT_EQ(precisions, "cdsz");
}

}  // namespace
