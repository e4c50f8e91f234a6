// Device profiles as hand-edited files (issue 16): numbers that are not the integers they must be,
// files that are not profiles (a FIFO, hundreds of MB) and a profile directory that cannot be
// read; and at the edges (issue 39): only the files named for a device are read, every number has
// a physical range, an identity cannot forge a log line, and without HOME no shared folder is
// used. tests/faults_test.sh and tests/planted_test.sh show the same end to end.
#include "profile/profile.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <locale>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

#include "profile/architecture.hpp"
#include "profile/choice.hpp"
#include "profile/database.hpp"
#include "profile/defaults.hpp"
#include "profile/json.hpp"
#include "profile/store.hpp"
#include "tandem_builtin_profiles.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

// A small valid profile's text, with `bucket` as its one bucket's fields after "size".
std::string profile_text(const std::string& bucket, const std::string& kernel = "{\"MWG\": 64}") {
  return R"({"format": 1, "tandem_version": "0.1.0", "identity": {"platform": "p", "device": "d",
    "driver": "1", "compute_units": 2, "cpu_model": "c", "blas": "b", "blas_version": "1",
    "blas_core": "z", "threads": 2},
    "precisions": {"s": {"gpu_kernel": )" +
         kernel + R"(, "gpu_size": 512, "gpu_gflops": 1.5,
      "buckets": [{"size": 512, )" +
         bucket + R"(, "kernel": {}, "cpu_gflops": 1, "gpu_gflops": 1, "best_gflops": 1}]}}})";
}

const char* kBucket = R"("parts": 8, "gpu_parts": 4, "cpu_threads": 1)";

// The message from_json gives for `text`, or "" if it parses.
std::string refusal(const std::string& text) {
  try {
    prof::from_json(text);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(Profile, IntegersMustBeIntegersInRange) {
  EXPECT_EQ(refusal(profile_text(kBucket)), "");
  EXPECT_EQ(prof::from_json(profile_text(kBucket))
                .precisions.at(detail::Precision::s)
                .gpu_kernel.at("MWG"),
            64);
  // Truncated to 64 before, silently.
  EXPECT_NE(refusal(profile_text(kBucket, "{\"MWG\": 64.7}"))
                .find("kernel parameter MWG = 64.7 is not an integer"),
            std::string::npos);
  // Overflowed the int conversion before.
  EXPECT_NE(refusal(profile_text(kBucket, "{\"MWG\": 1e10}")).find("kernel parameter MWG"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(kBucket, "{\"NWG\": 10000000000}"))
                .find("kernel parameter NWG = 10000000000 is out of range"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(kBucket, "{\"NWG\": -3000000000}")).find("out of range"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(kBucket, "[64]")).find("a kernel must be an object"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(R"("parts": 8.5, "gpu_parts": 4, "cpu_threads": 1)"))
                .find("parts = 8.5 is not an integer"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(R"("parts": 8, "gpu_parts": 4, "cpu_threads": 4294967297)"))
                .find("cpu_threads = 4294967297 is out"),  // of its type's range, or its own
            std::string::npos);
}

// The directory hermetic_main.cpp gave this process.
fs::path profile_dir() { return std::getenv("TANDEM_PROFILE_DIR"); }

TEST(Profile, OnlyRegularFilesOfAProfilesSizeAreRead) {
  // Both named as the lookup names this device's files: nothing else there is read.
  const prof::Identity id{};
  const fs::path fifo = profile_dir() / id.file_name(),
                 big = profile_dir() / "-0000000000000000.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    prof::load(fifo);  // would wait for a writer forever if it opened the FIFO
    ADD_FAILURE() << "a FIFO loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
  }
  { std::ofstream(big) << profile_text(kBucket); }
  fs::resize_file(big, 5 << 20);  // sparse: the valid text, then zeros
  try {
    prof::load(big);
    ADD_FAILURE() << "a 5 MiB file loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("5242880 bytes: a profile is at most 1048576"),
              std::string::npos)
        << e.what();
  }
  // Each is skipped, with one warning, by the lookup every call makes.
  ::testing::internal::CaptureStderr();
  prof::forget();
  prof::active(id);
  prof::forget();
  prof::active(id);
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string fifo_name = fifo.filename().string() + " is not a regular file";
  EXPECT_NE(err.find(fifo_name), std::string::npos) << err;
  EXPECT_NE(err.find("-0000000000000000.json is 5242880 bytes"), std::string::npos) << err;
  EXPECT_EQ(err.find(fifo_name, err.find(fifo_name) + 1), std::string::npos)
      << "warned twice: " << err;
}

// A profile's file name is the same whatever C++ locale the program has made global: a locale
// that groups digits (de_DE: a point every three) put its separators into the name's hash when a
// stream wrote it, and the lookup then neither found the file saved under the plain name nor took
// its own as a device's. The locale is the classic one with de_DE's grouping facet, made here: a
// named locale would need localedef, and glibc's newlocale leaks its LOCPATH list (LeakSanitizer).
namespace {
struct GroupedByThrees : std::numpunct<char> {
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};
}  // namespace

TEST(Profile, FileNameIsTheSameInALocaleThatGroupsDigits) {
  prof::Identity id;
  id.device = "Some Device";
  id.threads = 16;
  const std::string plain = id.file_name();
  const std::locale grouping(std::locale::classic(), new GroupedByThrees);
  std::ostringstream probe;
  probe.imbue(grouping);
  probe << 1234567;
  ASSERT_EQ(probe.str(), "1.234.567") << "the facet does not group";
  const std::locale found = std::locale::global(grouping);
  const std::string grouped = id.file_name();
  std::locale::global(found);
  EXPECT_EQ(grouped, plain);
  EXPECT_TRUE(id.names_same_device(grouped)) << grouped;
}

// 200 junk files of 4 MiB made the first call take 162 s when every *.json was parsed: only the
// files named for the device looked up are read, the others not even opened (a FIFO among them
// would otherwise warn, or hang).
TEST(Profile, OnlyTheFilesNamedForTheDeviceAreRead) {
  prof::Identity id;
  id.device = "Some Device";
  for (int i = 0; i < 200; ++i) std::ofstream(profile_dir() / (std::to_string(i) + ".json")) << "{";
  ASSERT_EQ(::mkfifo((profile_dir() / "fifo.json").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((profile_dir() / "Other_Device-0123456789abcdef.json").c_str(), 0600), 0);
  ::testing::internal::CaptureStderr();
  prof::forget();
  prof::active(id);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "read a file named for no such device";
  // Another setup's file for the same device is read (and refused, saying why).
  std::ofstream(profile_dir() / "Some_Device-0123456789abcdef.json") << "{";
  ::testing::internal::CaptureStderr();
  prof::forget();
  prof::active(id);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Some_Device-0123456789abcdef.json"), std::string::npos) << err;
  EXPECT_TRUE(id.names_same_device(id.file_name()));
  for (const char* other :
       {"Some_Device-0123456789abcdef.json.tmp", "Some_Device-0123.json",
        "Some_Device-0123456789abcdeg.json", "xSome_Device-0123456789abcdef.json"})
    EXPECT_FALSE(id.names_same_device(other)) << other;
}

TEST(Profile, AnUnreadableDirectoryIsReportedOnce) {
  const fs::path dir = profile_dir(), file = dir / "not-a-directory";
  { std::ofstream(file) << "x"; }
  setenv("TANDEM_PROFILE_DIR", file.c_str(), 1);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    prof::forget();
    prof::active(prof::Identity{});
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
  const std::string said = "cannot read the profile directory " + file.string() + " (not a dir";
  EXPECT_NE(err.find(said), std::string::npos) << err;
  EXPECT_EQ(err.find(said, err.find(said) + 1), std::string::npos) << "warned twice: " << err;
  // A directory that does not exist yet is no fault: nothing was tuned.
  setenv("TANDEM_PROFILE_DIR", (dir / "absent").c_str(), 1);
  ::testing::internal::CaptureStderr();
  prof::forget();
  prof::active(prof::Identity{});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
}

}  // namespace
}  // namespace tandem::test

namespace tandem::test {
namespace {

// Architectures: the text form, the distance (same family only; a major version apart is further
// than any minor one), and the database's nearest entry.
TEST(Architecture, TextAndDistance) {
  const auto a = prof::parse_architecture("nvidia-sm:9.0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->family, "nvidia-sm");
  EXPECT_EQ(a->major, 9);
  EXPECT_EQ(a->text(), "nvidia-sm:9.0");
  for (const char* bad : {"", "sm90", ":9.0", "nvidia-sm:9", "nvidia-sm:9.0x", "nvidia-sm:-1.0"})
    EXPECT_FALSE(prof::parse_architecture(bad)) << bad;
  EXPECT_EQ(prof::architecture_distance("nvidia-sm:9.0", "nvidia-sm:9.0"), 0);
  EXPECT_LT(*prof::architecture_distance("nvidia-sm:8.9", "nvidia-sm:8.0"),
            *prof::architecture_distance("nvidia-sm:8.9", "nvidia-sm:9.0"));
  EXPECT_FALSE(prof::architecture_distance("nvidia-sm:9.0", "amd-gfx:9.0"));
  EXPECT_FALSE(prof::architecture_distance("", "nvidia-sm:9.0"));
}

prof::Profile entry(const std::string& device, const std::string& architecture,
                    const std::string& match = "device") {
  prof::Profile p;
  p.tandem_version = TANDEM_VERSION;
  p.match = match;
  p.identity.platform = "NVIDIA CUDA";
  p.identity.device = device;
  p.identity.architecture = architecture;
  p.origin = "built-in:" + device;
  return p;
}

TEST(Architecture, AnUnlistedDeviceTakesItsNearestRelative) {
  const std::vector<prof::Profile> db{
      entry("H100", "nvidia-sm:9.0"), entry("A100", "nvidia-sm:8.0"),
      entry("fallback", "", "platform"), entry("an AMD card", "amd-gfx:9.0")};
  prof::Identity id;
  id.platform = "NVIDIA CUDA";
  std::string how;
  for (const auto& [arch, want] : {std::pair<const char*, const char*>{"nvidia-sm:9.0", "H100"},
                                   {"nvidia-sm:8.9", "A100"},
                                   {"nvidia-sm:8.6", "A100"},
                                   {"nvidia-sm:10.0", "H100"}}) {
    id.architecture = arch;
    const prof::Profile* p = prof::nearest_architecture(id, db, &how);
    ASSERT_NE(p, nullptr) << arch;
    EXPECT_EQ(p->identity.device, want) << arch;
    EXPECT_NE(how.find(arch), std::string::npos) << how;
  }
  id.architecture = "";
  EXPECT_EQ(prof::nearest_architecture(id, db, &how), nullptr) << "no architecture, no relative";
  id.architecture = "intel-ip:12.60";
  EXPECT_EQ(prof::nearest_architecture(id, db, &how), nullptr) << "another family";
  id.platform = "Other";
  id.architecture = "nvidia-sm:9.0";
  EXPECT_EQ(prof::nearest_architecture(id, db, &how), nullptr) << "another platform";
}

// One device tuned on two kinds of host (one H200 beside 16 cores, two beside 32): the entry of
// the likest host applies, the CPU and thread count first, then the CPU; else the first listed.
TEST(BuiltinEntry, ADevicesEntryFromTheLikestHost) {
  const auto tuned_on = [](const std::string& origin, const std::string& cpu, int threads) {
    prof::Profile p = entry("H200", "nvidia-sm:9.0");
    p.identity.cpu_model = cpu;
    p.identity.threads = threads;
    p.origin = origin;
    return p;
  };
  const std::vector<prof::Profile> db{entry("fallback", "", "platform"),
                                      tuned_on("one", "Xeon", 16), tuned_on("two", "Xeon", 32),
                                      tuned_on("epyc", "EPYC", 64), entry("H100", "nvidia-sm:9.0")};
  prof::Identity id = db[1].identity;
  for (const auto& [cpu, threads, want] :
       {std::tuple<const char*, int, const char*>{"Xeon", 16, "one"},
        {"Xeon", 32, "two"},
        {"Xeon", 8, "one"},
        {"EPYC", 64, "epyc"},
        {"EPYC", 16, "epyc"},
        {"Ryzen", 32, "one"}}) {
    id.cpu_model = cpu;
    id.threads = threads;
    const prof::Profile* p = prof::builtin_entry("device", id, db);
    ASSERT_NE(p, nullptr) << cpu << " " << threads;
    EXPECT_EQ(p->origin, want) << cpu << " " << threads;
  }
  const prof::Profile* platform = prof::builtin_entry("platform", id, db);
  ASSERT_NE(platform, nullptr);
  EXPECT_EQ(platform->identity.device, "fallback");
  id.device = "H100";
  id.cpu_model = "Xeon";
  ASSERT_NE(prof::builtin_entry("device", id, db), nullptr);
  EXPECT_EQ(prof::builtin_entry("device", id, db)->identity.device, "H100");
  id.device = "A100";
  EXPECT_EQ(prof::builtin_entry("device", id, db), nullptr);
}

// A device's entry lacking precisions takes each from the nearest relative that has it, and says
// so; what it has stays its own.
TEST(Architecture, ADevicesEntryTakesThePrecisionsItLacksFromItsNearestRelative) {
  // Each entry's sections carry its place in the database, so a section shows where it came from.
  std::vector<prof::Profile> db;
  const auto add = [&db](prof::Profile p, std::initializer_list<detail::Precision> precs) {
    for (const detail::Precision prec : precs) {
      prof::PrecisionProfile pp;
      pp.gpu_size = static_cast<int64_t>(db.size()) + 1;
      p.precisions[prec] = pp;
    }
    db.push_back(std::move(p));
  };
  using detail::Precision;
  add(entry("A100", "nvidia-sm:8.0"), {Precision::s, Precision::c});
  add(entry("H100", "nvidia-sm:9.0"), {Precision::s, Precision::d, Precision::z});
  add(entry("an AMD card", "amd-gfx:9.0"), {Precision::c, Precision::z});
  add(entry("H200", "nvidia-sm:9.0"), {Precision::s, Precision::d});
  add(entry("GH200", "nvidia-sm:9.0"), {Precision::s, Precision::d, Precision::c, Precision::z});
  const prof::Profile& h200 = db[3];
  const prof::Profile merged = prof::with_relatives_precisions(h200, h200.identity, db);
  ASSERT_EQ(merged.precisions.size(), 4u);
  EXPECT_EQ(merged.precisions.at(Precision::s).gpu_size, 4) << "its own s";
  EXPECT_EQ(merged.precisions.at(Precision::d).gpu_size, 4) << "its own d";
  EXPECT_EQ(merged.precisions.at(Precision::z).gpu_size, 2)
      << "the H100's z: the first of the same architecture";
  EXPECT_EQ(merged.precisions.at(Precision::c).gpu_size, 5)
      << "the GH200's c: the nearest with one (the A100's is further, the AMD card's of another "
         "family)";
  EXPECT_EQ(merged.origin,
            "built-in:H200 (c from built-in:GH200, same architecture, nvidia-sm:9.0) (z from "
            "built-in:H100, same architecture, nvidia-sm:9.0)");
  // Without the GH200, c comes from the nearer architecture of the family that has it.
  std::vector<prof::Profile> fewer(db.begin(), db.begin() + 4);
  const prof::Profile older = prof::with_relatives_precisions(h200, h200.identity, fewer);
  EXPECT_EQ(older.precisions.at(Precision::c).gpu_size, 1) << "the A100's";
  EXPECT_NE(older.origin.find("(c from built-in:A100, architecture nvidia-sm:8.0, the nearest to "
                              "nvidia-sm:9.0)"),
            std::string::npos)
      << older.origin;
  // An entry that lacks nothing, or one with no relative, or a device with no architecture, is
  // left as it is.
  const prof::Profile whole = prof::with_relatives_precisions(db[4], db[4].identity, db);
  for (const auto& [prec, pp] : whole.precisions) EXPECT_EQ(pp.gpu_size, 5) << detail::letter(prec);
  EXPECT_EQ(whole.origin, db[4].origin);
  const prof::Profile amd = prof::with_relatives_precisions(db[2], db[2].identity, db);
  EXPECT_EQ(amd.precisions.size(), 2u) << "the AMD card has no relative";
  EXPECT_EQ(amd.origin, db[2].origin);
  prof::Identity nameless = h200.identity;
  nameless.architecture = "";
  EXPECT_EQ(prof::with_relatives_precisions(h200, nameless, db).precisions.size(), 2u);
}

// What calls run by and what `tandem profile export` writes, on a made-up database: the entry for
// a device lacking precisions borrows them from its relative, each borrowed section naming its
// lender (the entry a tune of one phase records as based_on); without borrowing, the entry as
// shipped. A device of the architecture with no entry of its own takes a relative's, which borrows
// in turn.
TEST(Architecture, TheEntryForADeviceBorrowsForCallsAndIsExportedAsShipped) {
  using detail::Precision;
  std::vector<prof::Profile> db;
  const auto add = [&db](prof::Profile p, std::initializer_list<Precision> precs) {
    for (const Precision prec : precs) {
      prof::PrecisionProfile pp;
      pp.gpu_size = static_cast<int64_t>(db.size()) + 1;
      pp.source = p.origin;  // as profile::builtin() sets it
      p.precisions[prec] = pp;
    }
    db.push_back(std::move(p));
  };
  add(entry("H200", "nvidia-sm:9.0"), {Precision::s, Precision::d});
  add(entry("H100", "nvidia-sm:9.0"), {Precision::s, Precision::d, Precision::c, Precision::z});
  const auto calls = prof::entry_for(db[0].identity, db, /*borrow=*/true);
  ASSERT_NE(calls, nullptr);
  ASSERT_EQ(calls->precisions.size(), 4u);
  EXPECT_EQ(calls->precisions.at(Precision::s).gpu_size, 1) << "its own s";
  EXPECT_EQ(calls->precisions.at(Precision::s).source, "built-in:H200");
  for (const Precision prec : {Precision::c, Precision::z}) {
    EXPECT_EQ(calls->precisions.at(prec).gpu_size, 2) << detail::letter(prec);
    EXPECT_EQ(calls->precisions.at(prec).source, "built-in:H100") << detail::letter(prec);
  }
  EXPECT_EQ(calls->origin,
            "built-in:H200 (c, z from built-in:H100, same architecture, nvidia-sm:9.0)");
  const auto shipped = prof::entry_for(db[0].identity, db, /*borrow=*/false);
  ASSERT_NE(shipped, nullptr);
  EXPECT_EQ(shipped->precisions.size(), 2u);
  EXPECT_EQ(shipped->origin, "built-in:H200");
  // The first entry of the architecture serves a device without one: the H200's, borrowing.
  prof::Identity other = db[0].identity;
  other.device = "H800";
  const auto relative = prof::entry_for(other, db, /*borrow=*/true);
  ASSERT_NE(relative, nullptr);
  EXPECT_EQ(relative->precisions.size(), 4u);
  EXPECT_EQ(relative->precisions.at(Precision::z).source, "built-in:H100");
  EXPECT_EQ(prof::entry_for(other, db, /*borrow=*/false)->precisions.size(), 2u);
}

// The shipped database: the H200's entry has its own four sections (2026-11-29: c co-tuned on an
// H200; z the H100's kernels with batch rules measured on an H200), so nothing is borrowed there
// and its origin says none; what the borrowing does for an entry lacking a precision is the test
// above. Each section knows its entry, and `tandem profile export` writes the entry as shipped.
TEST(Architecture, TheH200sEntryHasItsOwnComplexSections) {
  prof::Identity id;
  id.platform = "NVIDIA CUDA";
  id.device = "NVIDIA H200";
  id.architecture = "nvidia-sm:9.0";
  id.compute_units = 132;
  const prof::Profile* own = prof::builtin_entry("device", id, prof::builtin());
  const prof::Profile* h100 = nullptr;
  for (const prof::Profile& p : prof::builtin())
    if (p.match == "device" && p.identity.device == "NVIDIA H100 80GB HBM3") h100 = &p;
  ASSERT_NE(own, nullptr);
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(own->origin, "built-in:nvidia-h200");
  prof::forget();
  const auto active = prof::active(own->identity);
  ASSERT_NE(active, nullptr);
  EXPECT_EQ(active->origin, own->origin) << "nothing borrowed";
  for (const detail::Precision prec : detail::kPrecisions) {
    ASSERT_EQ(own->precisions.count(prec), 1u) << detail::letter(prec);
    ASSERT_EQ(active->precisions.count(prec), 1u) << detail::letter(prec);
    EXPECT_EQ(active->precisions.at(prec).gpu_kernel, own->precisions.at(prec).gpu_kernel)
        << detail::letter(prec);
    EXPECT_EQ(active->precisions.at(prec).source, own->origin) << detail::letter(prec);
  }
  using detail::Precision;
  // s, d and c were measured on an H200 (their rates are not the H100's); z runs the H100's
  // kernels at the H100's recorded rates, with batch rules of its own.
  for (const Precision prec : {Precision::s, Precision::d, Precision::c})
    EXPECT_NE(own->precisions.at(prec).gpu_gflops, h100->precisions.at(prec).gpu_gflops)
        << detail::letter(prec);
  const prof::PrecisionProfile& z = own->precisions.at(Precision::z);
  EXPECT_EQ(z.gpu_kernel, h100->precisions.at(Precision::z).gpu_kernel);
  ASSERT_TRUE(z.batch.has_value() && z.batch_resident.has_value());
  EXPECT_FALSE(z.batch->points.empty());
  EXPECT_FALSE(z.batch_resident->points.empty());
  const auto shipped = prof::own(own->identity);
  ASSERT_NE(shipped, nullptr);
  EXPECT_EQ(shipped->precisions.size(), 4u);
  EXPECT_EQ(shipped->origin, own->origin);
  prof::forget();
}

// The shipped database: a device of SM 9.0 with no entry of its own takes the H100's entry, and
// says so.
TEST(Architecture, AnUnlistedHopperTakesTheH100sKernels) {
  prof::Identity id;
  id.platform = "NVIDIA CUDA";
  id.device = "NVIDIA H800";
  id.architecture = "nvidia-sm:9.0";
  std::string how;
  const prof::Profile* p = prof::nearest_architecture(id, prof::builtin(), &how);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->identity.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(how, "same architecture, nvidia-sm:9.0");
  const prof::Profile q = prof::from_json(prof::to_json(*p));
  EXPECT_EQ(q.identity.architecture, "nvidia-sm:9.0");
  std::string bad = prof::to_json(*p);
  bad.replace(bad.find("nvidia-sm:9.0"), 13, "sm90");
  EXPECT_THROW(prof::from_json(bad), std::runtime_error);
}

}  // namespace
}  // namespace tandem::test

namespace tandem::test {
namespace {

// A profile with every field there is: a bucket with a resident split and a kernel of its own,
// each with its tune's confirmation, a cost model with its measurements, the direct kernel and
// its threshold.
prof::Profile full_profile() {
  prof::Profile p = prof::from_json(profile_text(kBucket));
  prof::PrecisionProfile& pp = p.precisions.at(detail::Precision::s);
  prof::Bucket& b = pp.buckets.at(0);
  b.gpu_kernel = {{"MWG", 32}};
  b.resident.emplace();
  b.resident->gpu_parts = 8;
  b.resident->cpu_threads = 1;
  b.resident->dynamic = true;
  b.resident->kernel = {{"MWG", 32}};
  b.resident->gpu_gflops = b.resident->best_gflops = 2;
  b.resident->confirmation = {"faster", "split 8/64 1.20x the CPU alone's speed"};
  b.confirmation = {"too noisy", "too noisy to decide: the CPU alone kept"};
  detail::cost::Model m;
  m.cpu.gflops_by_threads = {{1, 10}, {2, 19}};
  m.device.kernel_gflops = 100;
  m.device.pack_by_threads = {{1, 1e9}};
  pp.model = m;
  detail::cost::Observation o;
  o.what = "cpu";
  o.m = o.n = o.k = 64;
  pp.observations = {o};
  pp.direct_kernel = {{"KERNEL", 2}};
  pp.direct_size = 256;
  pp.direct_gflops = 3;
  pp.direct_below = 128;
  prof::BatchRule ordinary;
  ordinary.devices_from = 181;
  ordinary.points = {
      {128, 4000, 300, 280, "not faster", "dealt 0.93x the cores alone's speed", 0, std::nullopt,
       std::nullopt, std::nullopt},
      {256, 500, 320, 450, "faster", "dealt 1.41x, ranges apart (5 rounds)", 520,
       prof::BatchSide::Devices,
       prof::FewProducts{10, 200, 150, false, "not faster", "the GPU alone 0.75x; the cores kept"},
       prof::MiddleCount{71, 250, 300, 310, prof::BatchSide::Devices, "faster",
                         "the GPU alone kept"}}};
  pp.batch = ordinary;
  prof::BatchRule resident;  // dealing paid nowhere
  resident.points = {{512, 60, 400, 390, "too noisy", "ranges overlap", 0, std::nullopt,
                      std::nullopt, std::nullopt}};
  pp.batch_resident = resident;
  pp.coalesced = {
      {64, 10, {{"KERNEL", 2}, {"MWG", 16}}, 40, 40, "not faster", "same", pp.direct_kernel, false},
      {256,
       2000,
       {{"KERNEL", 2}, {"MWG", 64}},
       900,
       600,
       "faster",
       "1.5x",
       pp.direct_kernel,
       false}};
  return p;
}

// One table holds the range of every number a profile has: a field added without one is found
// here, not by a user whose absurd value went through.
TEST(ProfileRanges, EveryNumberOfAProfileHasARange) {
  const nlohmann::json j = nlohmann::json::parse(prof::to_json(full_profile()));
  const std::vector<std::string> unranged = prof::check_ranges(j);
  EXPECT_TRUE(unranged.empty()) << "no range for " << unranged.front();
  EXPECT_NE(j.dump().find("observations"), std::string::npos);
  EXPECT_NE(j.dump().find("resident"), std::string::npos);
  // The built-in database is within them.
  for (const auto& [name, text] : builtin_profiles::all) {
    if (std::string(name) != "defaults") {
      EXPECT_NO_THROW(prof::from_json(text)) << name;
    }
  }
}

// Values no machine measures are refused, naming the field where the file has it (182 such values
// were accepted silently).
TEST(ProfileRanges, AbsurdValuesAreRefusedByName) {
  const auto with = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(prof::to_json(full_profile()));
    edit(j);
    return refusal(j.dump());
  };
  EXPECT_EQ(with([](nlohmann::json&) {}), "");
  const struct {
    std::function<void(nlohmann::json&)> edit;
    const char* said;
  } cases[] = {
      {[](auto& j) { j["precisions"]["s"]["buckets"][0]["cpu_gflops"] = -1; },
       "precisions.s.buckets[0].cpu_gflops = -1 is outside its range, 0 to 1e+08"},
      {[](auto& j) { j["precisions"]["s"]["buckets"][0]["cpu_threads"] = 100000000; },
       "precisions.s.buckets[0].cpu_threads = 100000000 is outside its range"},
      {[](auto& j) { j["precisions"]["s"]["buckets"][0]["resident"]["gpu_gflops"] = 1e300; },
       "precisions.s.buckets[0].resident.gpu_gflops = 1e+300 is outside"},
      {[](auto& j) { j["identity"]["threads"] = -4; }, "identity.threads = -4 is outside"},
      {[](auto& j) { j["precisions"]["s"]["gpu_gflops"] = -0.5; },
       "precisions.s.gpu_gflops = -0.5 is outside"},
      {[](auto& j) { j["precisions"]["s"]["model"]["device"]["overlap"] = 1.5; },
       "precisions.s.model.device.overlap = 1.5 is outside its range, 0 to 1"},
      {[](auto& j) { j["precisions"]["s"]["model"]["cpu"]["gflops_by_threads"][1][0] = 0; },
       "precisions.s.model.cpu.gflops_by_threads[1][0] = 0 is outside"},
      {[](auto& j) { j["precisions"]["s"]["model"]["observations"][0]["seconds"] = -1; },
       "precisions.s.model.observations[0].seconds = -1 is outside"},
      {[](auto& j) { j["tuning"]["seconds"] = -3; }, "tuning.seconds = -3 is outside"},
      {[](auto& j) { j["precisions"]["s"]["batch"]["devices_from"] = -1; },
       "precisions.s.batch.devices_from = -1 is outside"},
      {[](auto& j) { j["precisions"]["s"]["batch_resident"]["points"][0]["count"] = 0; },
       "precisions.s.batch_resident.points[0].count = 0 is outside"},
      {[](auto& j) { j["precisions"]["s"]["batch"]["points"][1]["hybrid_gflops"] = -2; },
       "precisions.s.batch.points[1].hybrid_gflops = -2 is outside"},
      {[](auto& j) { j["precisions"]["s"]["coalesced"][0]["count"] = 0; },
       "precisions.s.coalesced[0].count = 0 is outside"},
      {[](auto& j) { j["precisions"]["s"]["batch"]["points"][1]["few"]["gpu_gflops"] = -1; },
       "precisions.s.batch.points[1].few.gpu_gflops = -1 is outside"},
  };
  for (const auto& c : cases) {
    const std::string why = with(c.edit);
    EXPECT_NE(why.find(c.said), std::string::npos)
        << "wanted '" << c.said << "', got '" << why << "'";
  }
}

// A profile's sections are keyed by the precisions' letters: a section for c or z reads as s's
// does and is written back the same, with the same ranges; a letter no precision has is refused.
// Nothing tunes c or z yet, so what they say is only kept.
TEST(ProfileRanges, ComplexSectionsReadAsRealOnes) {
  const std::string s_section =
      nlohmann::json::parse(prof::to_json(full_profile())).at("precisions").at("s").dump();
  nlohmann::json j = nlohmann::json::parse(prof::to_json(full_profile()));
  for (const char* letter : {"c", "z"}) j["precisions"][letter] = nlohmann::json::parse(s_section);
  const prof::Profile p = prof::from_json(j.dump());
  ASSERT_EQ(p.precisions.size(), 3u);
  EXPECT_EQ(prof::to_json(p), j.dump(2) + "\n") << "read and written back as is";
  for (detail::Precision precision : {detail::Precision::c, detail::Precision::z}) {
    ASSERT_EQ(p.precisions.count(precision), 1u) << precision;
    EXPECT_EQ(p.precisions.at(precision).buckets.size(),
              p.precisions.at(detail::Precision::s).buckets.size());
  }
  nlohmann::json out = j;
  out["precisions"]["z"]["buckets"][0]["cpu_gflops"] = -1;
  EXPECT_NE(refusal(out.dump()).find("precisions.z.buckets[0].cpu_gflops = -1 is outside"),
            std::string::npos)
      << refusal(out.dump());
  for (const char* wrong : {"x", "S", "sd", ""}) {
    nlohmann::json bad = nlohmann::json::parse(prof::to_json(full_profile()));
    bad["precisions"][wrong] = nlohmann::json::parse(s_section);
    EXPECT_EQ(refusal(bad.dump()), std::string("unknown precision '") + wrong + "'");
  }
}

// The database's level-3 diagonal is kept by precision: s and d have theirs, and a precision
// without one is an error that says so.
TEST(ProfileDefaults, Level3DiagonalByPrecision) {
  EXPECT_EQ(prof::level3_min_diagonal(detail::Precision::s), 2048);
  EXPECT_EQ(prof::level3_min_diagonal(detail::Precision::d), 1024);
  try {
    prof::level3_min_diagonal(detail::Precision::z);
    ADD_FAILURE() << "zgemm's diagonal was found";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("level3.min_diagonal has no entry for precision z"),
              std::string::npos)
        << e.what();
  }
}

// What would be refused when read is never written, and a fit out of range (as a quick tune on a
// busy machine fitted one: a CPU at 4.9e276 GFLOPS) is left out before the co-tuner stores it,
// the rest of the profile kept.
TEST(ProfileRanges, NothingOutOfRangeIsWritten) {
  prof::Profile p = full_profile();
  EXPECT_TRUE(prof::drop_models_out_of_range(p).empty());
  ASSERT_TRUE(p.precisions.at(detail::Precision::s).model.has_value());
  p.precisions.at(detail::Precision::s).model->cpu.gflops_by_threads = {{1, 4.9e276}};
  const fs::path file = profile_dir() / "out-of-range.json";
  EXPECT_THROW(prof::save(p, file), std::runtime_error);
  EXPECT_FALSE(fs::exists(file));
  const auto dropped = prof::drop_models_out_of_range(p);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_NE(
      dropped.at(detail::Precision::s)
          .find("precisions.s.model.cpu.gflops_by_threads[0][1] = 4.9e+276 is outside its range"),
      std::string::npos)
      << dropped.at(detail::Precision::s);
  EXPECT_FALSE(p.precisions.at(detail::Precision::s).model.has_value());
  EXPECT_TRUE(p.precisions.at(detail::Precision::s).observations.empty());
  prof::save(p, file);
  EXPECT_EQ(prof::load(file).precisions.at(detail::Precision::s).buckets.size(), 1u);
}

// A NaN or an infinity, which JSON would write as null and every later read refuse, is never
// written; and a file nested deeper than any profile (a million '[' fits in a profile's 1 MiB)
// is refused as it is parsed, where the range check's and dump()'s recursion took it past the
// stack.
TEST(ProfileRanges, NonFiniteNumbersAreNotWrittenAndDeepNestingIsRefused) {
  prof::Profile p = full_profile();
  p.tuning.seconds = std::numeric_limits<double>::quiet_NaN();
  const fs::path file = profile_dir() / "not-finite.json";
  try {
    prof::save(p, file);
    ADD_FAILURE() << "a NaN was written";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tuning.seconds is NaN"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(file));
  for (const int depth : {prof::kMaxDepth + 1, 500000}) {
    const std::string deep =
        std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']');
    EXPECT_THROW(prof::from_json(deep), std::runtime_error) << depth;
    EXPECT_THROW(prof::from_json(R"({"format": 1, "gpu_kernel": )" + deep + "}"),
                 std::runtime_error)
        << depth;
  }
  std::string shallow = profile_text(kBucket);  // a real profile parses
  EXPECT_NO_THROW(prof::from_json(shallow));
}

// A bucket's confirmation (what the tune's interleaved rounds said) survives a save and a load,
// and a verdict the tune never writes is refused by name.
TEST(ProfileConfirmation, RoundTripsAndAnUnknownVerdictIsRefused) {
  const prof::Profile back = prof::from_json(prof::to_json(full_profile()));
  const prof::Bucket& b = back.precisions.at(detail::Precision::s).buckets.at(0);
  EXPECT_EQ(b.confirmation.verdict, "too noisy");
  EXPECT_EQ(b.confirmation.note, "too noisy to decide: the CPU alone kept");
  ASSERT_TRUE(b.resident);
  EXPECT_EQ(b.resident->confirmation.verdict, "faster");
  nlohmann::json j = nlohmann::json::parse(prof::to_json(full_profile()));
  j["precisions"]["s"]["buckets"][0]["confirmation"]["verdict"] = "probably";
  EXPECT_NE(refusal(j.dump()).find("confirmation verdict 'probably'"), std::string::npos)
      << refusal(j.dump());
  // A profile from before confirmations reads with none.
  j["precisions"]["s"]["buckets"][0].erase("confirmation");
  EXPECT_EQ(prof::from_json(j.dump())
                .precisions.at(detail::Precision::s)
                .buckets.at(0)
                .confirmation.verdict,
            "");
}

// A section a tune of one phase started from a built-in entry names that entry and the phases
// measured here, through a save and a load; the entry a section was read from is never written;
// a section without them reads as before, and an empty entry is refused.
TEST(ProfileBasedOn, RoundTripsAndTheSourceIsNotStored) {
  prof::Profile p = full_profile();
  prof::PrecisionProfile& s = p.precisions.at(detail::Precision::s);
  s.based_on = "built-in:nvidia-h100";
  s.measured = {"batch", "direct"};
  s.source = "built-in:never-written";
  const std::string text = prof::to_json(p);
  EXPECT_EQ(text.find("never-written"), std::string::npos) << text;
  const prof::PrecisionProfile back = prof::from_json(text).precisions.at(detail::Precision::s);
  EXPECT_EQ(back.based_on, "built-in:nvidia-h100");
  EXPECT_EQ(back.measured, (std::vector<std::string>{"batch", "direct"}));
  EXPECT_EQ(back.source, "");
  nlohmann::json j = nlohmann::json::parse(text);
  j["precisions"]["s"]["based_on"]["entry"] = "";
  EXPECT_NE(refusal(j.dump()).find("based_on's entry is empty"), std::string::npos)
      << refusal(j.dump());
  j["precisions"]["s"]["based_on"]["entry"] = "built-in:nvidia-h100";
  j["precisions"]["s"]["based_on"]["measured"] = {"batch", ""};
  EXPECT_NE(refusal(j.dump()).find("measured names an empty part"), std::string::npos)
      << refusal(j.dump());
  j["precisions"]["s"].erase("based_on");
  EXPECT_EQ(prof::from_json(j.dump()).precisions.at(detail::Precision::s).based_on, "");
  EXPECT_EQ(
      nlohmann::json::parse(prof::to_json(full_profile()))["precisions"]["s"].count("based_on"), 0u)
      << "written only where set";
}

// What a phase replaced in a section: the parts that differ, by their keys in the profile, the
// coalesced buckets by size (a batch phase out of time keeps the sizes it did not reach);
// nothing where the phase changed nothing, and never based_on itself.
TEST(ProfileBasedOn, ReplacedPartsAreThoseThatDiffer) {
  const prof::PrecisionProfile entry = full_profile().precisions.at(detail::Precision::s);
  EXPECT_TRUE(prof::replaced_parts(entry, entry).empty());
  prof::CoalescedBucket bucket;
  bucket.size = 512;
  bucket.count = 10;
  bucket.kernel = {{"KERNEL", 2}};
  bucket.verdict = "not faster";
  prof::PrecisionProfile before = entry, after = entry;
  before.coalesced = {bucket};
  bucket.size = 1024;
  before.coalesced.push_back(bucket);
  after.coalesced = before.coalesced;
  after.coalesced[0].gflops = 4155.8;  // 512^3 measured again, 1024^3 not reached
  after.batch->points.at(0).cpu_gflops += 1;
  after.based_on = "built-in:nvidia-h100";
  after.measured = {"model"};
  EXPECT_EQ(prof::replaced_parts(before, after),
            (std::vector<std::string>{"batch", "coalesced 512"}));
  after.direct_below = 100;
  after.coalesced.pop_back();
  EXPECT_EQ(prof::replaced_parts(before, after),
            (std::vector<std::string>{"batch", "direct_below", "coalesced 512", "coalesced 1024"}));
}

// A precision's batch rules (where auto deals a batch's products, by memory) survive a save and a
// load with the points they rest on, ascending by size; a verdict the tune never writes is
// refused by name, and a profile from before batch rules reads with none.
TEST(ProfileBatchRule, RoundTripsAndAnUnknownVerdictIsRefused) {
  const prof::Profile back = prof::from_json(prof::to_json(full_profile()));
  const prof::PrecisionProfile& pp = back.precisions.at(detail::Precision::s);
  ASSERT_TRUE(pp.batch && pp.batch_resident);
  EXPECT_EQ(pp.batch->devices_from, 181);
  ASSERT_EQ(pp.batch->points.size(), 2u);
  EXPECT_EQ(pp.batch->points[1].size, 256);
  EXPECT_EQ(pp.batch->points[1].count, 500);
  EXPECT_EQ(pp.batch->points[1].hybrid_gflops, 450);
  EXPECT_EQ(pp.batch->points[1].verdict, "faster");
  EXPECT_EQ(pp.batch->points[0].note, "dealt 0.93x the cores alone's speed");
  EXPECT_EQ(pp.batch->points[1].gpu_gflops, 520);
  EXPECT_EQ(pp.batch->points[1].chosen, prof::BatchSide::Devices);
  EXPECT_FALSE(pp.batch->points[0].chosen.has_value()) << "none chosen, none written";
  EXPECT_EQ(pp.batch->points[0].side(), prof::BatchSide::Cores);
  EXPECT_EQ(pp.batch_resident->devices_from, 0);
  // A point's few products: the cores kept, with their rates and words.
  EXPECT_FALSE(pp.batch->points[0].few.has_value()) << "none measured, none written";
  ASSERT_TRUE(pp.batch->points[1].few.has_value());
  const prof::FewProducts& few = *pp.batch->points[1].few;
  EXPECT_EQ(few.count, 10);
  EXPECT_EQ(few.cpu_gflops, 200);
  EXPECT_EQ(few.gpu_gflops, 150);
  EXPECT_FALSE(few.devices);
  EXPECT_EQ(few.verdict, "not faster");
  EXPECT_EQ(few.note, "the GPU alone 0.75x; the cores kept");
  nlohmann::json j = nlohmann::json::parse(prof::to_json(full_profile()));
  EXPECT_EQ(j["precisions"]["s"]["batch"]["points"][1]["few"]["side"], "cores");
  nlohmann::json dealt_few = j;
  dealt_few["precisions"]["s"]["batch"]["points"][1]["few"]["side"] = "dealt";
  EXPECT_NE(refusal(dealt_few.dump()).find("few products are never dealt"), std::string::npos)
      << refusal(dealt_few.dump());
  dealt_few["precisions"]["s"]["batch"]["points"][1]["few"]["side"] = "devices";
  dealt_few["precisions"]["s"]["batch"]["points"][1]["few"]["verdict"] = "perhaps";
  EXPECT_NE(refusal(dealt_few.dump()).find("few products verdict 'perhaps'"), std::string::npos)
      << refusal(dealt_few.dump());
  // A point's middle count: with its rates and side, between its few products' count and its own,
  // and only beside its few products.
  const prof::MiddleCount& middle = *pp.batch->points[1].middle;
  EXPECT_EQ(middle.count, 71);
  EXPECT_EQ(middle.hybrid_gflops, 310);
  EXPECT_EQ(middle.side, prof::BatchSide::Devices);
  EXPECT_EQ(middle.note, "the GPU alone kept");
  EXPECT_FALSE(pp.batch->points[0].middle.has_value());
  for (const int64_t count : {10, 500}) {
    nlohmann::json outside = j;
    outside["precisions"]["s"]["batch"]["points"][1]["middle"]["count"] = count;
    EXPECT_NE(refusal(outside.dump())
                  .find("middle count " + std::to_string(count) +
                        " is not between its few products' 10 and its own "
                        "count 500"),
              std::string::npos)
        << refusal(outside.dump());
  }
  nlohmann::json lone = j;
  lone["precisions"]["s"]["batch"]["points"][1].erase("few");
  EXPECT_NE(refusal(lone.dump()).find("middle count without its few products"), std::string::npos)
      << refusal(lone.dump());
  lone = j;
  lone["precisions"]["s"]["batch"]["points"][1]["middle"]["verdict"] = "likely";
  EXPECT_NE(refusal(lone.dump()).find("middle count verdict 'likely'"), std::string::npos)
      << refusal(lone.dump());
  std::swap(j["precisions"]["s"]["batch"]["points"][0], j["precisions"]["s"]["batch"]["points"][1]);
  EXPECT_EQ(prof::from_json(j.dump()).precisions.at(detail::Precision::s).batch->points[0].size,
            128)
      << "read in ascending order whatever the file's";
  j["precisions"]["s"]["batch"]["points"][1]["side"] = "both";
  EXPECT_NE(refusal(j.dump()).find("batch point side 'both'"), std::string::npos)
      << refusal(j.dump());
  j["precisions"]["s"]["batch"]["points"][1]["side"] = "dealt";
  j["precisions"]["s"]["batch"]["points"][0]["verdict"] = "maybe";
  EXPECT_NE(refusal(j.dump()).find("batch point verdict 'maybe'"), std::string::npos)
      << refusal(j.dump());
  j["precisions"]["s"].erase("batch");
  j["precisions"]["s"].erase("batch_resident");
  const prof::Profile old = prof::from_json(j.dump());
  EXPECT_FALSE(old.precisions.at(detail::Precision::s).batch.has_value());
  EXPECT_FALSE(old.precisions.at(detail::Precision::s).batch_resident.has_value());
}

// A precision's coalesced-kernel buckets survive a save and a load, ascending by size then count;
// a batch takes the bucket nearest in size on a log scale, then nearest in count; a precision or
// profile without buckets, a nearest bucket whose search did not win, or one timed against
// another direct kernel than the profile's now (or against none recorded), gives none (the
// direct kernel); an empty kernel and an unknown verdict are refused by name.
TEST(ProfileCoalesced, RoundTripsAndTheNearestBucketApplies) {
  const prof::Profile back = prof::from_json(prof::to_json(full_profile()));
  const auto& buckets = back.precisions.at(detail::Precision::s).coalesced;
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].size, 64);
  EXPECT_EQ(buckets[1].count, 2000);
  EXPECT_EQ(buckets[1].kernel.at("MWG"), 64);
  EXPECT_EQ(buckets[1].direct_gflops, 600);
  EXPECT_EQ(buckets[1].verdict, "faster");
  EXPECT_EQ(buckets[0].note, "same");
  nlohmann::json swapped = nlohmann::json::parse(prof::to_json(full_profile()));
  std::swap(swapped["precisions"]["s"]["coalesced"][0], swapped["precisions"]["s"]["coalesced"][1]);
  EXPECT_EQ(prof::from_json(swapped.dump()).precisions.at(detail::Precision::s).coalesced[0].size,
            64)
      << "read in ascending order whatever the file's";
  const auto mwg = [&](double edge, int64_t count) {
    const auto* k = prof::coalesced_for(&back, detail::Precision::s, true, edge, count);
    return k != nullptr ? k->at("MWG") : -1;
  };
  EXPECT_EQ(mwg(64, 10), -1) << "a bucket whose search did not win: the direct kernel";
  EXPECT_EQ(mwg(120, 10), -1) << "120 is nearer 64 than 256 on a log scale";
  EXPECT_EQ(mwg(135, 10), 64) << "135 is nearer 256";
  EXPECT_EQ(mwg(4096, 1), 64) << "the largest bucket beyond it";
  EXPECT_EQ(prof::coalesced_for(&back, detail::Precision::d, true, 64, 10), nullptr);
  EXPECT_EQ(prof::coalesced_for(nullptr, detail::Precision::s, true, 64, 10), nullptr);
  prof::PrecisionProfile by_count;
  by_count.direct_kernel = {{"KERNEL", 2}, {"MWG", 32}};
  by_count.coalesced = {
      {128, 10, {{"MWG", 8}}, 1, 1, "faster", "", by_count.direct_kernel, false},
      {128, 5000, {{"MWG", 128}}, 1, 1, "faster", "", by_count.direct_kernel, false}};
  EXPECT_EQ(prof::coalesced_for(by_count, true, 128, 50)->at("MWG"), 8);
  EXPECT_EQ(prof::coalesced_for(by_count, true, 128, 1000)->at("MWG"), 128);
  by_count.direct_kernel["MWG"] = 64;  // a tune --direct-only found another direct kernel
  EXPECT_EQ(prof::coalesced_for(by_count, true, 128, 1000), nullptr)
      << "timed against a direct kernel the profile no longer has";
  by_count.direct_kernel.clear();  // the defaults' direct kernel
  EXPECT_EQ(prof::coalesced_for(by_count, true, 128, 1000), nullptr);
  by_count.coalesced[1].direct_kernel =
      *prof::direct_for(nullptr, detail::Precision::s, true).kernel;
  EXPECT_EQ(prof::coalesced_for(by_count, true, 128, 1000)->at("MWG"), 128)
      << "timed against the defaults' direct kernel, which the profile still runs";
  EXPECT_EQ(prof::coalesced_for(prof::PrecisionProfile{}, true, 128, 1000), nullptr);
  nlohmann::json j = nlohmann::json::parse(prof::to_json(full_profile()));
  EXPECT_EQ(
      prof::from_json(j.dump()).precisions.at(detail::Precision::s).coalesced[1].direct_kernel,
      (std::map<std::string, int>{{"KERNEL", 2}}));
  j["precisions"]["s"]["coalesced"][1].erase("direct_kernel");
  const prof::Profile older = prof::from_json(j.dump());
  EXPECT_EQ(prof::coalesced_for(&older, detail::Precision::s, true, 256, 2000), nullptr)
      << "a profile older than the record: its faster bucket is not trusted";
  j["precisions"]["s"]["coalesced"][0]["verdict"] = "perhaps";
  EXPECT_NE(refusal(j.dump()).find("coalesced bucket verdict 'perhaps'"), std::string::npos)
      << refusal(j.dump());
  j["precisions"]["s"]["coalesced"][0]["verdict"] = "faster";
  j["precisions"]["s"]["coalesced"][0]["kernel"] = nlohmann::json::object();
  EXPECT_NE(refusal(j.dump()).find("kernel is empty"), std::string::npos) << refusal(j.dump());
  j["precisions"]["s"].erase("coalesced");
  EXPECT_TRUE(prof::from_json(j.dump()).precisions.at(detail::Precision::s).coalesced.empty());
}

// The rates a batch's shares are weighed by: the nearest coalesced bucket's (its kernel's where it
// applies, else the direct kernel's; none where it was timed against another direct kernel), and
// the cores' from the nearest point of the rule for the operands' memory.
TEST(ProfileCoalesced, BatchRatesComeFromTheBucketAndTheRuleForTheMemory) {
  const prof::Profile p = full_profile();  // s: buckets at 64 x 10 (not faster), 256 x 2000
  const auto rates = [&](double edge, int64_t count, bool resident) {
    return prof::batch_rates(&p, detail::Precision::s, true, edge, count, resident);
  };
  EXPECT_EQ(rates(256, 2000, false).device, 900) << "the bucket's own kernel won";
  EXPECT_EQ(rates(64, 10, false).device, 40) << "the direct kernel's rate";
  EXPECT_EQ(rates(100, 10, false).cpu, 300) << "the ordinary rule's point at 128";
  EXPECT_EQ(rates(300, 10, false).cpu, 320) << "its point at 256";
  EXPECT_EQ(rates(300, 10, true).cpu, 400) << "tandem_malloc memory's rule: its point at 512";
  EXPECT_EQ(rates(256, 2000, true).device, 0) << "the bucket was measured from ordinary memory";
  prof::Profile both = p;  // a nearer bucket of the other memory hides nothing
  both.precisions.at(detail::Precision::s)
      .coalesced.push_back(
          {250, 2000, {{"KERNEL", 2}, {"MWG", 64}}, 7, 7, "not faster", "", {{"KERNEL", 2}}, true});
  EXPECT_EQ(prof::batch_rates(&both, detail::Precision::s, true, 256, 2000, false).device, 900);
  EXPECT_EQ(prof::batch_rates(&both, detail::Precision::s, true, 256, 2000, true).device, 7);
  EXPECT_EQ(rates(1024, 2000, false).device, 0) << "nothing within a doubling of 1024";
  EXPECT_EQ(rates(1024, 2000, false).cpu, 0);
  EXPECT_EQ(rates(181, 10, false).device, 900) << "181 is nearer 256, within a doubling";
  const prof::Profile back = prof::from_json(prof::to_json(p));
  EXPECT_EQ(back.precisions.at(detail::Precision::s).coalesced[1].resident, false);
  nlohmann::json j = nlohmann::json::parse(prof::to_json(p));
  j["precisions"]["s"]["coalesced"][1].erase("resident");
  const prof::Profile older = prof::from_json(j.dump());
  EXPECT_EQ(prof::batch_rates(&older, detail::Precision::s, true, 256, 2000, false).device, 0)
      << "a bucket from before the memory was recorded: its rate is not used";
  prof::Profile moved = p;
  moved.precisions.at(detail::Precision::s).direct_kernel = {{"KERNEL", 2}, {"MWG", 8}};
  EXPECT_EQ(prof::batch_rates(&moved, detail::Precision::s, true, 256, 2000, false).device, 0)
      << "timed against a direct kernel the profile no longer has";
  EXPECT_EQ(prof::batch_rates(&p, detail::Precision::d, true, 256, 2000, false).device, 0);
  EXPECT_EQ(prof::batch_rates(nullptr, detail::Precision::s, true, 256, 2000, false).cpu, 0);
}

// A batch rule's side for a count (batch_side_at): the few products' side up to their count,
// then the fastest of the lines each side's time draws through two measured counts, the side the
// rounds kept at a measured count, and nothing from the point's own count on. The rates at ten
// products and at the points' counts are an H200's from tandem_malloc memory
// (database/nvidia-h200.json, s): at 128^3 the lines cross at 11.3 products, at 32^3 never.
// Without a middle count the devices take what the lines give them as the point has it (dealt);
// with one, dealing is weighed between it and the point's count, where the rounds kept it at
// either: the middle counts' rates here are made up, the crossings worked out by hand.
TEST(ProfileBatch, TheSideForACountFollowsTheLinesThroughTheMeasuredCounts) {
  using Side = prof::BatchSide;
  const auto point = [](int64_t size, int64_t count, double cpu, double gpu, double dealt,
                        prof::FewProducts few) {
    prof::BatchPoint q;
    q.size = size;
    q.count = count;
    q.cpu_gflops = cpu;
    q.gpu_gflops = gpu;
    q.hybrid_gflops = dealt;
    q.verdict = "faster";
    q.few = few;
    return q;
  };
  prof::BatchRule rule;
  rule.devices_from = 32;
  rule.points = {point(32, 87381, 343, 293, 386, {10, 62.1, 10.1, false, "not faster", ""}),
                 point(128, 5461, 871, 1593, 1976, {10, 257.8, 253.4, false, "not faster", ""})};
  const auto at = [&](double edge, int64_t count) {
    return prof::batch_side_at(rule, edge, count);
  };
  EXPECT_EQ(at(128, 10), Side::Cores) << "the few products' side";
  EXPECT_EQ(at(128, 3), Side::Cores) << "fewer products than it had, the same";
  EXPECT_EQ(at(128, 11), Side::Cores) << "the lines, before they cross";
  EXPECT_EQ(at(128, 12), Side::Dealt) << "the lines, after they cross: the point's side";
  EXPECT_EQ(at(128, 5460), Side::Dealt);
  EXPECT_EQ(at(128, 5461), std::nullopt) << "the point's own count: its side applies";
  EXPECT_EQ(at(180, 100), Side::Dealt) << "within a doubling of 128";
  EXPECT_EQ(at(32, 1000), Side::Cores) << "the GPU alone's line runs above the cores' at 32^3";
  EXPECT_EQ(at(32, 87380), Side::Cores);
  EXPECT_EQ(at(45, 1000), Side::Cores) << "45 is nearer 32";
  EXPECT_EQ(at(300, 100), std::nullopt) << "no point within a doubling";
  rule.points[1].chosen = Side::Devices;
  EXPECT_EQ(at(128, 12), Side::Devices) << "a point that kept the devices alone: they";
  rule.points[1].chosen.reset();
  // A middle count at 128^3 (prof::middle_count: 234 between 10 and 5,461) where the GPU alone
  // beat dealing: below it the lines weigh the cores against the devices alone (dealing is not
  // measured there), above it all three, dealing's line crossing the devices' at 794.3.
  EXPECT_EQ(prof::middle_count(10, 5461), 234);
  rule.points[1].middle = prof::MiddleCount{234, 700, 1100, 800, Side::Devices, "faster", ""};
  EXPECT_EQ(at(128, 11), Side::Cores) << "the lines to the middle count cross at 11.2";
  EXPECT_EQ(at(128, 12), Side::Devices) << "the devices alone, not dealt, below the middle";
  EXPECT_EQ(at(128, 233), Side::Devices);
  EXPECT_EQ(at(128, 234), Side::Devices) << "the middle count: the side its rounds kept";
  EXPECT_EQ(at(128, 794), Side::Devices) << "dealing's line still above the devices'";
  EXPECT_EQ(at(128, 795), Side::Dealt) << "and below it";
  EXPECT_EQ(at(128, 5460), Side::Dealt);
  rule.points[1].middle->side = Side::Cores;
  EXPECT_EQ(at(128, 234), Side::Cores) << "the rounds' side at the middle count, whatever medians";
  rule.points[1].middle->side = Side::Devices;
  rule.points[1].chosen = Side::Devices;
  EXPECT_EQ(at(128, 795), Side::Devices) << "dealing kept at neither count: never dealt";
  EXPECT_EQ(at(128, 5460), Side::Devices);
  rule.points[1].middle->side = Side::Dealt;
  EXPECT_EQ(at(128, 795), Side::Dealt) << "kept at the middle count: weighed again";
  rule.points[1].chosen.reset();
  rule.points[1].middle->gpu_gflops = 0;
  EXPECT_EQ(at(128, 12), Side::Dealt)
      << "a middle count where the devices alone failed: the lines as without it";
  EXPECT_EQ(at(128, 234), Side::Dealt);
  rule.points[1].middle->gpu_gflops = 1100;
  // s 64^3 (the H200's point: dealt 1.43x the cores, the devices alone slower than the cores,
  // both at 21,845 products) with a middle count of 467 where the cores won: the cores up to
  // dealing's line crossing theirs at 1,395.9, then dealt.
  prof::BatchPoint p64 = point(64, 21845, 767, 744, 1097, {10, 119, 48, false, "not faster", ""});
  EXPECT_EQ(prof::middle_count(10, 21845), 467);
  p64.middle = prof::MiddleCount{467, 600, 300, 400, Side::Cores, "not faster", ""};
  rule.points = {p64};
  EXPECT_EQ(at(64, 100), Side::Cores);
  EXPECT_EQ(at(64, 1395), Side::Cores);
  EXPECT_EQ(at(64, 1396), Side::Dealt) << "dealing measured at two counts mends 5,000-20,000";
  EXPECT_EQ(at(64, 20000), Side::Dealt);
  p64.middle.reset();
  rule.points = {p64};
  EXPECT_EQ(at(64, 20000), Side::Cores) << "without it the lines kept them on the cores";
  rule.points = {point(128, 5461, 871, 1593, 1976, {10, 257.8, 0, false, "not faster", ""})};
  EXPECT_EQ(at(128, 100), std::nullopt) << "a side not measured at both counts";
  EXPECT_EQ(at(128, 10), Side::Cores) << "the few products' side still holds at its count";
  rule.points[0].few.reset();
  EXPECT_EQ(at(128, 10), std::nullopt) << "no few products near 128: nothing to say";
}

// No middle count where the point's count leaves no doubling to either side of it, and never
// fewer products than auto deals.
TEST(ProfileBatch, TheMiddleCountLiesADoublingFromEither) {
  const int64_t least = prof::batch_deal_from_count();
  EXPECT_EQ(prof::middle_count(10, 1000), std::max<int64_t>(least, 100));
  EXPECT_EQ(prof::middle_count(10, 16), 0) << "d 1024^3's 16 products: none between";
  EXPECT_EQ(prof::middle_count(10, 2 * least - 1), 0);
  EXPECT_EQ(prof::middle_count(10, 2 * least), least) << "no fewer than auto deals";
  EXPECT_EQ(prof::middle_count(1000, 1500), 0);
}

// Control characters in a profile's identity reach the log escaped, in the one line they belong
// to: a driver string cannot forge a line of its own.
TEST(ProfileLog, AnIdentityCannotForgeALogLine) {
  prof::Identity id;
  id.device = "dev";
  prof::Profile p = full_profile();
  p.identity = id;
  p.identity.driver = "9\ntandem: warning: forged\x1b[2J";
  p.tandem_version = TANDEM_VERSION;
  prof::save(p, profile_dir() / ("dev-0000000000000000.json"));
  ::testing::internal::CaptureStderr();
  prof::forget();
  prof::active(id);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("driver '9\\ntandem: warning: forged\\x1b[2J'"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "more than one line: " << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << err;
}

// Two tunes of different precisions that save at once both land: each takes the other's section
// from the file under a lock beside it. Without the lock each read the file before the other had
// replaced it, and the later rename dropped the earlier one's precision. Rounds of two threads
// saving s and d over an absent file, started together.
TEST(Profile, TwoSavesOfDifferentPrecisionsAtOnceBothLand) {
  prof::Profile base = full_profile();
  base.tandem_version = TANDEM_VERSION;
  const prof::PrecisionProfile section = base.precisions.at(detail::Precision::s);
  const fs::path file = prof::path_for(base.identity);
  int lost = 0;
  for (int round = 0; round < 20; ++round) {
    fs::remove(file);
    std::atomic<int> ready{0};
    std::string failures[2];
    const auto save = [&](detail::Precision prec, std::string* failure) {
      prof::Profile p = base;
      p.precisions = {{prec, section}};
      ready.fetch_add(1);
      while (ready.load() < 2) std::this_thread::yield();
      try {
        prof::save_local_over(p, {prec});
      } catch (const std::exception& e) {
        *failure = e.what();
      }
    };
    std::thread s(save, detail::Precision::s, &failures[0]),
        d(save, detail::Precision::d, &failures[1]);
    s.join();
    d.join();
    ASSERT_EQ(failures[0] + failures[1], "");
    const prof::Profile saved = prof::load(file);
    lost += saved.precisions.count(detail::Precision::s) == 0 ||
            saved.precisions.count(detail::Precision::d) == 0;
  }
  EXPECT_EQ(lost, 0) << "rounds that lost a precision, of 20";
  // The lock file beside the profile is not a profile the lookup reads.
  EXPECT_FALSE(base.identity.names_same_device("." + file.filename().string() + ".lock"));
}

// The cache folder the XDG rules give (XDG_CACHE_HOME, else HOME's .cache) where no
// TANDEM_PROFILE_DIR is set; a relative XDG_CACHE_HOME is ignored, as those rules say, for it
// would name another folder in each working directory.
TEST(ProfileDirectory, RelativeXdgCacheHomeIsIgnored) {
  const fs::path keep = profile_dir();
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string kept_home = home != nullptr ? home : "", kept_xdg = xdg != nullptr ? xdg : "";
  ::unsetenv("TANDEM_PROFILE_DIR");
  ::setenv("HOME", "/nonexistent/home", 1);
  ::setenv("XDG_CACHE_HOME", "/nonexistent/xdg", 1);
  EXPECT_EQ(prof::directory(), fs::path("/nonexistent/xdg/tandem"));
  ::setenv("XDG_CACHE_HOME", "relative/xdg", 1);
  EXPECT_EQ(prof::directory(), fs::path("/nonexistent/home/.cache/tandem"));
  ::setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(prof::directory(), fs::path("/nonexistent/home/.cache/tandem"));
  const auto restore = [](const char* name, bool was_set, const std::string& value) {
    if (was_set)
      ::setenv(name, value.c_str(), 1);
    else
      ::unsetenv(name);
  };
  restore("HOME", home != nullptr, kept_home);
  restore("XDG_CACHE_HOME", xdg != nullptr, kept_xdg);
  ::setenv("TANDEM_PROFILE_DIR", keep.c_str(), 1);
}

// Without HOME (nor XDG_CACHE_HOME, nor TANDEM_PROFILE_DIR), the profile directory is the user's
// private runtime directory, else none: never a fixed folder in the shared temporary directory,
// where another user can plant a profile or a link first. With none, a saved profile lives in the
// process's memory.
TEST(ProfileDirectory, WithoutHomeNoSharedFolder) {
  const fs::path keep = profile_dir(), run = fs::path(std::getenv("TMPDIR")) / "run";
  fs::create_directories(run);
  ::unsetenv("TANDEM_PROFILE_DIR");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  ::chmod(run.c_str(), 0700);
  ::setenv("XDG_RUNTIME_DIR", run.c_str(), 1);
  EXPECT_EQ(prof::directory(), run / "tandem");
  ::chmod(run.c_str(), 0755);  // others may look in: not private
  EXPECT_EQ(prof::directory(), fs::path());
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(prof::directory(), fs::path());
  EXPECT_EQ(prof::path_for(prof::Identity{}), fs::path());

  prof::Profile p = full_profile();
  p.tandem_version = TANDEM_VERSION;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(prof::save_local(p), fs::path());
  prof::forget();
  const auto found = prof::active(p.identity);
  prof::forget();
  prof::active(p.identity);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->origin, "memory (no profile directory)");
  const std::string said = "profiles are kept in memory only";
  EXPECT_NE(err.find(said), std::string::npos) << err;
  EXPECT_EQ(err.find(said), err.rfind(said)) << "said more than once: " << err;
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / "tandem"));
  ::setenv("TANDEM_PROFILE_DIR", keep.c_str(), 1);
}

}  // namespace
}  // namespace tandem::test
