// The accuracy notes' cache (cli/validation_cache.h): a warm run prints what a cold one prints, byte for
// byte, and a cache written for other validation files, other profiles or a damaged file is not used.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli_run.h"

using namespace meshplan_test;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for one test case's meshplan runs, and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// A fresh, empty cache directory for XDG_CACHE_HOME.
std::string fresh_cache(const std::string& name) {
  const std::string dir = scratch_dir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<fs::path> cache_files(const std::string& xdg) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(xdg + "/meshplan", ec))
    if (e.path().filename().string().rfind("validation-", 0) == 0) files.push_back(e.path());
  return files;
}

// Llama-2-7B on 16 GB200 (the profile whose held-out runs are weak as a whole: a note line of its own).
std::string estimate(const std::string& extra = "") {
  return "estimate --model " + source_path("examples/models/llama-2-7b.yaml") +
         " --hardware gb200-nvl72 --gpus 16 --global-batch 32 --seq 4096" + extra;
}

CliResult ok(const std::string& args) {
  CliResult r = run_cli(args);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

// What a run prints with no cache at all (its own empty directory).
CliResult cold(const std::string& args, const std::string& name) {
  ScopedEnv env("XDG_CACHE_HOME", fresh_cache(name));
  return ok(args);
}

void copy_yaml_dir(const std::string& from, const std::string& to) {
  fs::remove_all(to);
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    if (e.path().extension() == ".yaml") fs::copy_file(e.path(), fs::path(to) / e.path().filename());
}

// Halves the GB200's HBM bandwidth in the profile file at `path` (every GB200 run slower, so that profile's
// note changes), then checks `args` prints a new note, the one a cold run prints.
void halve_gb200_hbm_and_expect_new_note(const std::string& path, const std::string& args, const CliResult& before,
                                         const std::string& cold_name) {
  const std::string text = slurp(path);
  const std::string edited = std::regex_replace(text, std::regex("hbm_bandwidth_gb_per_s: 8000"), "hbm_bandwidth_gb_per_s: 4000");
  REQUIRE(edited != text);
  std::ofstream(path, std::ios::binary) << edited;
  const CliResult after = ok(args);
  CHECK(after.err != before.err);
  CHECK(after.err == cold(args, cold_name).err);
}

}  // namespace

TEST_CASE("validation cache: the warm run prints the cold run's bytes and the cache file is what it read") {
  ScopedEnv env("XDG_CACHE_HOME", fresh_cache("warm"));
  const CliResult first = ok(estimate());
  const std::vector<fs::path> files = cache_files(scratch_dir() + "/warm");
  REQUIRE(files.size() == 1);
  const std::string written = slurp(files.front().string());
  CHECK(written.find("\"schema\":\"meshplan-validation-notes/1\"") != std::string::npos);
  CHECK(written.find("build-id:") != std::string::npos);  // the binary's build id keys it
  CHECK(first.err.find("note: the model is weak for runs on gb200-nvl72: on ") != std::string::npos);
  const CliResult second = ok(estimate());
  CHECK(second.out == first.out);
  CHECK(second.err == first.err);
  CHECK(slurp(files.front().string()) == written);  // read, not rewritten
  const CliResult json1 = ok(estimate(" --format json")), plan = ok("plan --model " +
      source_path("examples/models/llama-2-7b.yaml") + " --hardware gb200-nvl72 --gpus 16 --global-batch 32 --seq 4096");
  CHECK(json1.out == cold(estimate(" --format json"), "warm-json").out);
  CHECK(plan.err.find("note: the model is weak for runs on gb200-nvl72: on ") != std::string::npos);
}

TEST_CASE("validation cache: other validation files are predicted afresh, not read from the cache") {
  const std::string dir = scratch_dir() + "/validation-copy";
  copy_yaml_dir(source_path("validation"), dir);
  ScopedEnv validation("MESHPLAN_VALIDATION", dir);
  ScopedEnv cache("XDG_CACHE_HOME", fresh_cache("edited"));
  const CliResult full = ok(estimate());
  CHECK(full.err.find("runs on gb200-nvl72") != std::string::npos);
  // Without the GB200 files the profile has no held-out runs: its line must go, as in a cold run.
  int removed = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (slurp(e.path().string()).find("\nhardware: gb200-nvl72") != std::string::npos) removed += fs::remove(e.path());
  REQUIRE(removed > 0);
  const CliResult reduced = ok(estimate());
  CHECK(reduced.err.find("runs on gb200-nvl72") == std::string::npos);
  CHECK(reduced.err == cold(estimate(), "edited-cold").err);
}

TEST_CASE("validation cache: an edited profile is predicted afresh, not read from the cache") {
  const std::string dir = scratch_dir() + "/profiles-copy";
  copy_yaml_dir(source_path("hardware-profiles"), dir);
  ScopedEnv cache("XDG_CACHE_HOME", fresh_cache("profile"));
  const std::string args = estimate(" --profiles-dir " + dir);
  const CliResult before = ok(args);
  halve_gb200_hbm_and_expect_new_note(dir + "/gb200-nvl72.yaml", args, before, "profile-cold");
}

TEST_CASE("validation cache: a profile's base outside the profiles directory keys the cache too") {
  const std::string dir = scratch_dir() + "/profiles-derived";
  copy_yaml_dir(source_path("hardware-profiles"), dir);
  // gb200-nvl72 becomes a derived profile whose base lies outside the directory the key hashes as a whole.
  const std::string outside = scratch_dir() + "/profiles-outside";
  fs::remove_all(outside);
  fs::create_directories(outside);
  fs::rename(dir + "/gb200-nvl72.yaml", outside + "/gb200-shared.yaml");
  std::ofstream(dir + "/gb200-nvl72.yaml", std::ios::binary)
      << "name: gb200-nvl72\nsource: test\nbase: ../profiles-outside/gb200-shared.yaml\n";
  ScopedEnv cache("XDG_CACHE_HOME", fresh_cache("outside"));
  const std::string args = estimate(" --profiles-dir " + dir);
  const CliResult before = ok(args);
  halve_gb200_hbm_and_expect_new_note(outside + "/gb200-shared.yaml", args, before, "outside-cold");
}

TEST_CASE("validation cache: a damaged cache file is ignored and rewritten, an unwritable directory only costs time") {
  const std::string xdg = fresh_cache("damaged");
  const CliResult reference = cold(estimate(), "damaged-reference");
  {
    ScopedEnv env("XDG_CACHE_HOME", xdg);
    ok(estimate());
    const std::vector<fs::path> files = cache_files(xdg);
    REQUIRE(files.size() == 1);
    const std::string good = slurp(files.front().string());
    // Cut mid-record: still JSON-looking, not a whole file.
    std::ofstream(files.front(), std::ios::binary) << good.substr(0, good.size() / 2);
    const CliResult cut = ok(estimate());
    CHECK(cut.err == reference.err);
    CHECK(cut.out == reference.out);
    CHECK(slurp(files.front().string()) == good);
    // A record of the wrong shape under the right key.
    std::string wrong = good;
    const size_t at = wrong.find(",false,");
    REQUIRE(at != std::string::npos);
    wrong.replace(at, 7, ",\"no\",");
    std::ofstream(files.front(), std::ios::binary) << wrong;
    CHECK(ok(estimate()).err == reference.err);
    CHECK(slurp(files.front().string()) == good);
  }
  // XDG_CACHE_HOME under a regular file: nothing can be created there.
  const std::string blocker = write_scratch("not-a-directory", "x");
  ScopedEnv env("XDG_CACHE_HOME", blocker + "/cache");
  const CliResult unwritable = ok(estimate());
  CHECK(unwritable.err == reference.err);
  CHECK(unwritable.out == reference.out);
}
