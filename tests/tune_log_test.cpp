// The co-tuner's JSON-lines log under faults (issue 16): a last line torn by an interrupted run, a
// run resumed from the log, and a log that stops taking writes mid-run. tests/faults_test.sh shows
// a tune that cannot write its profile or log stopping before any work.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cotuner.hpp"
#include "profile.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

// The smallest tune there is, its log in this process's profile directory, named after the test
// so that the tests of one process (run by hand, or sanitized) never resume each other's logs.
tuner::TuneOptions tiny(int evaluations) {
  tuner::TuneOptions o;
  o.precisions = {'s'};
  o.small_space = true;
  o.budget_evaluations = evaluations;
  o.sizes = {32};
  o.parts = 2;
  o.reps = 1;
  o.top_kernels = 1;
  o.save = false;
  o.direct = false;
  o.log = fs::path(std::getenv("TANDEM_PROFILE_DIR")) /
          (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".jsonl");
  return o;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int kernel_records(const fs::path& log) {
  int n = 0;
  for (const auto& line : lines_of(log))
    if (const auto r = prof::from_log_line(line); r && r->kind == "kernel") ++n;
  return n;
}

TEST(TuneLog, AResumedRunCountsWhatTheLogHeld) {
  const auto first = tuner::tune(tiny(2));
  ASSERT_EQ(first.precisions.at(0).evaluations, 2);
  const auto again = tuner::tune(tiny(2));
  EXPECT_EQ(again.precisions.at(0).evaluations, 0) << "nothing new measured";
  EXPECT_EQ(again.precisions.at(0).resumed, 2);
  EXPECT_EQ(again.profile.tuning.evaluations, 2) << "the profile rests on two candidates";
}

TEST(TuneLog, ATornLastLineDoesNotSwallowTheNextRecord) {
  const auto o = tiny(2);
  tuner::tune(o);
  // As an interrupted run leaves it: the first kernel's record, and half the second's.
  const auto lines = lines_of(o.log);
  ASSERT_GE(lines.size(), 2u);
  ASSERT_TRUE(prof::from_log_line(lines[1]).has_value());
  std::ofstream(o.log, std::ios::trunc) << lines[0] << "\n" << lines[1].substr(0, 40);
  ASSERT_EQ(kernel_records(o.log), 1);
  tuner::tune(o);  // measures one kernel again, and appends it
  EXPECT_EQ(kernel_records(o.log), 2) << "the new record went into the torn line";
  const auto third = tuner::tune(o);
  EXPECT_EQ(third.precisions.at(0).resumed, 2);
  EXPECT_EQ(third.precisions.at(0).evaluations, 0);
}

TEST(TuneLog, AFailedWriteIsReported) {
  auto o = tiny(3);
  // After the first measurement the log becomes a directory, which no write can go to.
  o.on_progress = [log = o.log](const tuner::Progress&) {
    std::error_code ec;
    if (fs::is_regular_file(log, ec)) {
      fs::remove(log, ec);
      fs::create_directory(log, ec);
    }
  };
  ::testing::internal::CaptureStderr();
  const auto report = tuner::tune(o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_GT(report.precisions.at(0).evaluations, 1);
  EXPECT_NE(err.find("cannot write the tuning log " + o.log.string()), std::string::npos) << err;
  EXPECT_EQ(err.find("cannot write", err.find("cannot write") + 1), std::string::npos)
      << "said more than once: " << err;
}

}  // namespace
}  // namespace tandem::test
