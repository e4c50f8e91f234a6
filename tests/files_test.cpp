// The one rule for files tandem writes and reads by name (src/base/files.hpp), with things planted
// where it writes: a link at the old temporary name and at the file itself, FIFOs and devices in
// place of the file, a write that fails partway (a file-size limit standing in for a full disk),
// and files too large to read. Each case that could hang runs under an alarm. Writes go only to
// device nodes the test makes itself: a broken rule once replaced the system's /dev/null.
#include "base/files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace files = detail::files;

// A fresh directory in this process's temporary directory (hermetic_main.cpp's), with a victim
// file outside it that nothing may change.
class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(std::getenv("TMPDIR")) /
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(root_ / "dir");
    dir_ = root_ / "dir";
    victim_ = root_ / "victim";
    std::ofstream(victim_) << "victim\n";
    alarm(60);  // a hang is a failure, not a stuck suite
  }
  void TearDown() override { alarm(0); }

  std::string text(const fs::path& p) const {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The directory's entries, but for those named.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    return out;
  }
  // A device node of the test's own (a null device, as /dev/null is), so that a broken rule
  // replaces nothing of the system's; "" where this user may not make one.
  fs::path device() const {
    const fs::path node = root_ / "null";
    return ::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0 ? node : fs::path();
  }
  std::string refusal(const std::function<void()>& f) const {
    try {
      f();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }

  fs::path root_, dir_, victim_;
};

TEST_F(Files, ReplaceWritesTheWholeFileAndLeavesNothingElse) {
  const fs::path file = dir_ / "p.json";
  files::replace(file, "first\n");
  files::replace(file, "second\n");
  EXPECT_EQ(text(file), "second\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"p.json"});
}

// The old scheme wrote FILE.tmp and renamed it: a link planted there had its target overwritten.
TEST_F(Files, ALinkAtTheOldTemporaryNameIsNotFollowed) {
  const fs::path file = dir_ / "p.json";
  fs::create_symlink(victim_, file.string() + ".tmp");
  files::replace(file, "profile\n");
  EXPECT_EQ(text(victim_), "victim\n");
  EXPECT_EQ(text(file), "profile\n");
}

TEST_F(Files, OnlyARegularFileOrNothingIsReplaced) {
  const fs::path link = dir_ / "link", fifo = dir_ / "fifo", sub = dir_ / "sub";
  fs::create_symlink(victim_, link);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directory(sub);
  std::vector<std::pair<fs::path, const char*>> planted{
      {link, "a symbolic link"}, {fifo, "a FIFO"}, {sub, "a directory"}};
  if (const fs::path null = device(); !null.empty())
    planted.emplace_back(null, "a character device");
  EXPECT_EQ(files::unwritable("/dev/null"), "it is a character device");  // a check writes nothing
  for (const auto& [path, kind] : planted) {
    const std::string why = refusal([&, p = path] { files::replace(p, "x"); });
    EXPECT_NE(why.find(std::string("it is ") + kind), std::string::npos) << path << ": " << why;
    EXPECT_EQ(files::unwritable(path), std::string("it is ") + kind) << path;
  }
  EXPECT_EQ(text(victim_), "victim\n");
  EXPECT_TRUE(fs::is_symlink(link) && fs::is_fifo(fifo)) << "replaced what it refused";
  EXPECT_EQ(entries().size(), 3u) << "a temporary file was left";
  EXPECT_EQ(files::unwritable(dir_ / "absent"), "");
  EXPECT_NE(files::unwritable(dir_ / "no" / "such"), "");
}

// A write that fails partway, as on a full disk: the file-size limit makes write() fail with
// EFBIG (SIGXFSZ ignored). The destination keeps its old text and no temporary file is left.
TEST_F(Files, AFailedWriteLeavesTheOldFileAndNoTemporaryFile) {
  const fs::path file = dir_ / "p.json";
  files::replace(file, "old\n");
  std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string why = refusal([&] { files::replace(file, std::string(100000, 'x')); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  EXPECT_NE(why.find("cannot write " + file.string()), std::string::npos) << why;
  EXPECT_EQ(text(file), "old\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"p.json"});
  // A directory that is gone: reported, nothing made.
  EXPECT_NE(refusal([&] { files::replace(dir_ / "gone" / "p.json", "x"); }), "");
}

TEST_F(Files, AppendTakesOnlyARegularFileAndNeverWaits) {
  const fs::path log = dir_ / "log", link = dir_ / "link", fifo = dir_ / "fifo";
  files::append(log, "");
  files::append(log, "one\n");
  files::append(log, "two\n");
  EXPECT_EQ(text(log), "one\ntwo\n");
  fs::create_symlink(victim_, link);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A FIFO with no reader: open() without O_NONBLOCK would wait here for one forever.
  std::vector<fs::path> planted{link, fifo, dir_};
  if (const fs::path null = device(); !null.empty()) planted.push_back(null);
  for (const fs::path& p : planted) {
    EXPECT_NE(refusal([&] { files::append(p, "x\n"); }).find("it is"), std::string::npos) << p;
    std::string why;
    EXPECT_EQ(files::open_append(p, &why), -1) << p;
    EXPECT_NE(why.find("it is"), std::string::npos) << p << ": " << why;
  }
  EXPECT_EQ(text(victim_), "victim\n");
}

// A lock excludes another taker of the same lock file until it is let go, and gives up after its
// wait, holding nothing, where another holds it that long; it is made 0600, never taken through a
// link, a FIFO, a device or a directory at its name, and never waits on one.
TEST_F(Files, ALockExcludesUntilLetGoAndWaitsOnlyAsLongAsAsked) {
  const fs::path lock = dir_ / ".file.lock";
  {
    const files::Lock first(lock, 1);
    ASSERT_TRUE(first.held());
    struct stat st;
    ASSERT_EQ(::stat(lock.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const auto t0 = std::chrono::steady_clock::now();
    const files::Lock second(lock, 0.2);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_FALSE(second.held()) << "held by the first";
    EXPECT_GE(waited, 0.2);
    EXPECT_LT(waited, 30.0);
  }
  EXPECT_TRUE(files::Lock(lock, 0.2).held()) << "let go with the first";
  EXPECT_TRUE(fs::exists(lock)) << "the lock file stays";
  const fs::path link = dir_ / "link", fifo = dir_ / "fifo";
  fs::create_symlink(victim_, link);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<fs::path> planted{link, fifo, dir_};
  if (const fs::path null = device(); !null.empty()) planted.push_back(null);
  for (const fs::path& p : planted) EXPECT_FALSE(files::Lock(p, 0.2).held()) << p;
  EXPECT_EQ(text(victim_), "victim\n");
}

TEST_F(Files, ReadTakesARegularFileOfItsSizeAndNeverWaits) {
  const fs::path file = dir_ / "f", link = dir_ / "link", fifo = dir_ / "fifo";
  std::ofstream(file) << "text";
  fs::create_symlink(file, link);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(files::read(file, 4, "a test file"), "text");
  EXPECT_EQ(files::read(link, 4, "a test file"), "text") << "a link is followed for reading";
  EXPECT_NE(refusal([&] {
              files::read(file, 3, "a test file");
            }).find("is 4 bytes: a test file is at most 3"),
            std::string::npos);
  // /dev/zero never ends: it was read until memory ran out (1.1 GB in 8 s as a tune log).
  for (const fs::path& p : {fifo, fs::path("/dev/zero")})
    EXPECT_NE(
        refusal([&] { files::read(p, 1 << 20, "a test file"); }).find("is not a regular file"),
        std::string::npos)
        << p;
}

}  // namespace
}  // namespace tandem::test
