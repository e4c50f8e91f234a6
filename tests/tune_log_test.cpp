// The co-tuner's JSON-lines log under faults (issue 16): a last line torn by an interrupted run, a
// run resumed from the log, and a log that stops taking writes mid-run; and things planted where
// the tune reads and writes (issue 39): a FIFO, a device, a link or a huge file as its log, a link
// at its profile's name or at the name its temporary file once had. tests/faults_test.sh shows a
// tune that cannot write its profile or log stopping before any work.
#include "profile/tune_log.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "cotuner.hpp"
#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

// The smallest tune there is, its log in this process's profile directory, named after the test
// so that the tests of one process (run by hand, or sanitized) never resume each other's logs.
tuner::TuneOptions tiny(int evaluations) {
  tuner::TuneOptions o;
  o.precisions = {detail::Precision::s};
  o.small_space = true;
  o.budget_evaluations = evaluations;
  o.sizes = {32};
  o.parts = 2;
  o.reps = 1;
  o.top_kernels = 1;
  o.save = false;
  o.direct = false;
  o.batch = false;  // cotuner_test measures the batch rule
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
  EXPECT_NE(err.find("cannot write " + o.log.string() + ": it is a directory"), std::string::npos)
      << err;
  EXPECT_EQ(err.find("cannot write", err.find("cannot write") + 1), std::string::npos)
      << "said more than once: " << err;
}

// What tuner::tune threw, or "".
std::string refusal(const tuner::TuneOptions& o) {
  try {
    tuner::tune(o);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Each refused before anything is measured, and at once: a FIFO without a writer waited forever,
// /dev/zero was read until 1.1 GB, a link had its target appended to.
TEST(TuneLog, OnlyARegularFileIsALog) {
  alarm(120);  // a hang fails the test
  auto o = tiny(2);
  int measured = 0;
  o.on_progress = [&measured](const tuner::Progress&) { ++measured; };
  const fs::path dir = o.log.parent_path(), victim = dir / "victim";
  std::ofstream(victim) << "victim\n";
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  fs::create_symlink(victim, dir / "link");
  std::vector<std::pair<fs::path, const char*>> planted{{dir / "fifo", "it is a FIFO"},
                                                        {dir / "link", "it is a symbolic link"}};
  // A zero device of the test's own (as /dev/zero is), never the system's, where it may make one.
  if (::mknod((dir / "zero").c_str(), S_IFCHR | 0666, makedev(1, 5)) == 0)
    planted.emplace_back(dir / "zero", "it is a character device");
  for (const auto& [log, said] : planted) {
    o.log = log;
    EXPECT_NE(refusal(o).find(said), std::string::npos) << log << ": " << refusal(o);
  }
  // A file of a log's kind but far past any log's size (sparse: it takes no disk).
  o.log = dir / "huge.jsonl";
  { std::ofstream(o.log) << "{}\n"; }
  fs::resize_file(o.log, uintmax_t{65} << 20);
  EXPECT_NE(refusal(o).find("bytes: a tuning log is at most"), std::string::npos) << refusal(o);
  EXPECT_EQ(measured, 0);
  EXPECT_EQ(text_of(victim), "victim\n");
  alarm(0);
}

// The profile is written whole through an exclusive temporary file: a link planted at FILE.tmp
// (the name the temporary file once had) is not followed, and a link at the profile's own name
// stops the tune before it measures (the old tune truncated the link's target to 0 bytes first).
TEST(TuneLog, LinksPlantedAtTheProfileAreNotFollowed) {
  auto o = tiny(1);
  o.save = true;
  const prof::Identity id = prof::identity_for(detail::gpu::info(*detail::gpu::open_device("")));
  const fs::path profile = prof::path_for(id), victim = profile.parent_path() / "victim";
  std::ofstream(victim) << "victim\n";
  fs::create_symlink(victim, profile.string() + ".tmp");
  const auto report = tuner::tune(o);
  EXPECT_EQ(report.saved, profile);
  EXPECT_EQ(text_of(victim), "victim\n");
  EXPECT_EQ(prof::load(profile).identity, id);
  fs::remove(profile);
  fs::create_symlink(victim, profile);
  int measured = 0;
  o.on_progress = [&measured](const tuner::Progress&) { ++measured; };
  EXPECT_NE(
      refusal(o).find("cannot write the profile " + profile.string() + ": it is a symbolic link"),
      std::string::npos)
      << refusal(o);
  EXPECT_EQ(measured, 0);
  EXPECT_EQ(text_of(victim), "victim\n");
}

}  // namespace
}  // namespace tandem::test
