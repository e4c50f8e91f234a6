// A locale the tests make themselves: de_DE.UTF-8 (a decimal comma, digits grouped by threes with
// a point), built with localedef from Debian's locales package (scripts/setup.sh) into a
// temporary directory that LOCPATH names while the object lives. Where it cannot be made,
// made() is false and the test skips. The C locale and LOCPATH found are put back at the end.
// For the C locale only (setlocale): glibc 2.36's newlocale, which std::locale(kName) calls, keeps
// the list it makes of LOCPATH, and the suites' LeakSanitizer fails the process for it. A test of a
// C++ locale makes one from a facet instead (profile_test).
#pragma once

#include <stdlib.h>

#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace tandem::test {

class MadeLocale {
 public:
  static constexpr const char* kName = "de_DE.UTF-8";

  MadeLocale() {
    if (const char* all = std::setlocale(LC_ALL, nullptr)) locale_ = all;
    if (const char* path = std::getenv("LOCPATH")) locpath_ = path;
    dir_ = (std::filesystem::temp_directory_path() / "tandem-locale-XXXXXX").string();
    if (mkdtemp(dir_.data()) == nullptr) {
      dir_.clear();
      return;
    }
    const std::string make =
        "localedef -i de_DE -f UTF-8 '" + dir_ + "/" + kName + "' >/dev/null 2>&1";
    (void)std::system(make.c_str());  // exits 1 for warnings with the locale made
    setenv("LOCPATH", dir_.c_str(), 1);
    made_ = std::filesystem::exists(std::filesystem::path(dir_) / kName);
  }
  ~MadeLocale() {
    std::setlocale(LC_ALL, locale_.c_str());
    if (locpath_)
      setenv("LOCPATH", locpath_->c_str(), 1);
    else
      unsetenv("LOCPATH");
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  MadeLocale(const MadeLocale&) = delete;
  MadeLocale& operator=(const MadeLocale&) = delete;

  bool made() const { return made_; }

 private:
  std::string dir_;
  bool made_ = false;
  std::string locale_ = "C";            // the C locale found, put back at the end
  std::optional<std::string> locpath_;  // LOCPATH as found
};

}  // namespace tandem::test
