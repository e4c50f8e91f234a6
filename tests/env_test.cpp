// The TANDEM_* environment: parsing rules through a fake lookup, and whole-process behaviour
// under variables that ctest sets (see tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/text.hpp"
#include "support/made_locale.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

std::map<std::string, std::string>* g_fake = nullptr;

const char* fake_lookup(const char* name) {
  auto it = g_fake->find(name);
  return it == g_fake->end() ? nullptr : it->second.c_str();
}

detail::EnvConfig parse(std::map<std::string, std::string> vars) {
  g_fake = &vars;
  auto cfg = detail::parse_env(fake_lookup);
  g_fake = nullptr;
  return cfg;
}

TEST(EnvParse, ValidValues) {
  auto cfg = parse({{"TANDEM_STRATEGY", "Hybrid"},
                    {"TANDEM_GPU_FRACTION", "0.25"},
                    {"TANDEM_DEVICE", "pocl"},
                    {"TANDEM_BALANCE", "Dynamic"},
                    {"TANDEM_VERBOSE", "1"}});
  EXPECT_EQ(cfg.strategy, Strategy::Hybrid);
  EXPECT_EQ(cfg.balance, Balance::Dynamic);
  EXPECT_EQ(cfg.gpu_fraction, 0.25);
  EXPECT_EQ(cfg.device, "pocl");
  EXPECT_TRUE(cfg.verbose);
  EXPECT_FALSE(parse({}).strategy.has_value());
}

// tandem is a library: the program may have set LC_NUMERIC to a locale whose decimal point is a
// comma before tandem reads its environment, and the numbers are still read as written ("0.5",
// which strtod then stops at the point). The locale is made here with localedef, from Debian's
// locales package (scripts/setup.sh); where it cannot be made the test is skipped.
TEST(EnvParse, NumbersReadTheSameInALocaleWithADecimalComma) {
  bool comma = false;
  double strtod_read = 0.5;
  detail::EnvConfig cfg;
  {
    const test::MadeLocale locale;
    comma = locale.made() && std::setlocale(LC_NUMERIC, test::MadeLocale::kName) != nullptr;
    if (comma) strtod_read = std::strtod("0.5", nullptr);
    cfg = parse({{"TANDEM_GPU_FRACTION", "0.5"}, {"TANDEM_MIN_MNK", "1.5e6"}});
  }
  if (!comma) GTEST_SKIP() << "localedef made no de_DE.UTF-8 locale (Debian's locales package)";
  EXPECT_EQ(strtod_read, 0.0) << "strtod stops at the point in this locale";
  EXPECT_EQ(cfg.gpu_fraction, 0.5);
  EXPECT_EQ(cfg.min_mnk, 1.5e6);
}

TEST(EnvParse, NumbersAsWritten) {
  EXPECT_EQ(detail::text::number("0.25"), 0.25);
  EXPECT_EQ(detail::text::number(" +1.5e6"), 1.5e6);
  EXPECT_EQ(detail::text::number("-2"), -2.0);
  for (const char* bad : {"", " ", "+", "+-1", "0,5", "0.5x", "0x1p-1", "1e999"})
    EXPECT_FALSE(detail::text::number(bad).has_value()) << "'" << bad << "'";
}

TEST(EnvParse, MalformedValuesWarnOnceAndAreIgnored) {
  ::testing::internal::CaptureStderr();
  auto cfg = parse({{"TANDEM_STRATEGY", "fastest"}, {"TANDEM_GPU_FRACTION", "1.5"}});
  auto again = parse({{"TANDEM_STRATEGY", "fastest"}, {"TANDEM_GPU_FRACTION", "1.5"}});
  auto nan = parse(
      {{"TANDEM_GPU_FRACTION", "nan"}, {"TANDEM_VERBOSE", "loud"}, {"TANDEM_BALANCE", "greedy"}});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cfg.strategy.has_value());
  EXPECT_FALSE(cfg.gpu_fraction.has_value());
  EXPECT_FALSE(nan.gpu_fraction.has_value());
  EXPECT_FALSE(nan.verbose);
  EXPECT_FALSE(nan.balance.has_value());
  EXPECT_NE(err.find("TANDEM_BALANCE='greedy'"), std::string::npos) << err;
  EXPECT_NE(err.find("TANDEM_STRATEGY='fastest'"), std::string::npos) << err;
  EXPECT_NE(err.find("TANDEM_GPU_FRACTION='1.5'"), std::string::npos) << err;
  EXPECT_NE(err.find("TANDEM_GPU_FRACTION='nan'"), std::string::npos) << err;
  EXPECT_NE(err.find("TANDEM_VERBOSE='loud'"), std::string::npos) << err;
  // Once each: the second identical parse printed nothing more.
  EXPECT_EQ(err.find("TANDEM_STRATEGY='fastest'"), err.rfind("TANDEM_STRATEGY='fastest'")) << err;
}

// A value is written into the warning that names it; its control characters are escaped there
// (src/base/log.cpp, where every line is written), so a newline cannot start a forged "tandem:
// warning:" line and an escape sequence cannot drive the terminal.
TEST(EnvParse, ControlCharactersInAValueAreEscaped) {
  ::testing::internal::CaptureStderr();
  parse({{"TANDEM_STRATEGY", "x\ntandem: warning: forged\r\x1b[2J\x7f\t\x01"}});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("TANDEM_STRATEGY='x\\ntandem: warning: forged\\r\\x1b[2J\\x7f\\t\\x01'"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "more than one line: " << err;
  for (const char c : err.substr(0, err.size() - 1))
    EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << "raw control " << int(c);
}

// The process tests below only mean something under the variables ctest gives them.
bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == value;
}

TEST(EnvProcess, DeviceNamingNothingFallsBackToCpu) {
  ASSERT_TRUE(env_is("TANDEM_DEVICE", "no-such-device")) << "run through ctest";
  ASSERT_TRUE(env_is("TANDEM_STRATEGY", "hybrid"));
  std::vector<float> a(40 * 30, 1.0f), b(30 * 20, 2.0f), c(40 * 20, -1.0f);
  Report r;
  ::testing::internal::CaptureStderr();
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 40, 20, 30, 1.0f, a.data(), 30, b.data(),
              20, 1.0f, c.data(), 20, {}, &r);
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 40, 20, 30, 1.0f, a.data(), 30, b.data(),
              20, 0.0f, c.data(), 20, {}, &r);
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (float x : c) ASSERT_EQ(x, 60.0f);
  EXPECT_TRUE(r.fell_back);
  EXPECT_NE(err.find("no-such-device"), std::string::npos) << err;
  EXPECT_EQ(err.find("warning"), err.rfind("warning")) << "one warning only: " << err;
}

TEST(EnvProcess, ExplicitOptionsOverrideTheEnvironment) {
  ASSERT_TRUE(env_is("TANDEM_DEVICE", "no-such-device")) << "run through ctest";
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64, 0.0f);
  Options o;
  o.strategy = Strategy::Cpu;
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 64, 64, 64, 1.0f, a.data(), 64, b.data(),
              64, 0.0f, c.data(), 64, o, &r);
  EXPECT_EQ(r.strategy, Strategy::Cpu);
  EXPECT_FALSE(r.fell_back);
  o.strategy = Strategy::Hybrid;
  o.device = "0";  // overrides TANDEM_DEVICE
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 64, 64, 64, 1.0f, a.data(), 64, b.data(),
              64, 0.0f, c.data(), 64, o, &r);
  EXPECT_FALSE(r.fell_back) << r.fallback_reason;
  EXPECT_GT(r.gpu_rows, 0);
  for (float x : c) ASSERT_EQ(x, 64.0f);
}

TEST(EnvVerbose, OneLinePerCall) {
  ASSERT_TRUE(env_is("TANDEM_VERBOSE", "1")) << "run through ctest";
  std::vector<double, Allocator<double>> a(100 * 50, 1.0), b(50 * 70, 1.0), c(100 * 70, 0.0);
  ::testing::internal::CaptureStderr();
  tandem_dgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 100, 70, 50, 1.0, a.data(), 50,
               b.data(), 70, 0.0, c.data(), 70);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("dgemm m=100 n=70 k=50 strategy=hybrid"), std::string::npos) << err;
  EXPECT_NE(err.find("A=zero-copy B=zero-copy C=zero-copy"), std::string::npos) << err;
  EXPECT_NE(err.find("cpu_rows="), std::string::npos) << err;
  EXPECT_NE(err.find("gpu="), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "exactly one line: " << err;
}

TEST(EnvMalformed, WarnsNamingVariableAndValue) {
  ASSERT_TRUE(env_is("TANDEM_GPU_FRACTION", "lots")) << "run through ctest";
  ::testing::internal::CaptureStderr();
  std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 0.0f);
  ASSERT_EQ(tandem_sgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 2, 2, 2, 1.0f,
                         a.data(), 2, b.data(), 2, 0.0f, c.data(), 2),
            0);
  ASSERT_EQ(tandem_sgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 2, 2, 2, 1.0f,
                         a.data(), 2, b.data(), 2, 0.0f, c.data(), 2),
            0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("TANDEM_GPU_FRACTION='lots'"), std::string::npos) << err;
  EXPECT_EQ(err.find("TANDEM_GPU_FRACTION"), err.rfind("TANDEM_GPU_FRACTION")) << "once: " << err;
  for (float x : c) EXPECT_EQ(x, 2.0f);
}

}  // namespace
}  // namespace tandem::test
