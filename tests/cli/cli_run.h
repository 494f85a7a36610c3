// Test helper: run the built meshplan binary, capture exit code, stdout and stderr; scratch files;
// the check that a refusal is one line with a hint.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace meshplan_test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A per-process scratch directory (removed by nobody: the OS temp dir is fine for tests).
inline std::string scratch_dir() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("meshplan-cli-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

inline std::string write_scratch(const std::string& name, const std::string& text) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// Runs `meshplan <args>` (args are passed through the shell as written).
inline CliResult run_cli(const std::string& args) {
  static int counter = 0;
  const std::string base = scratch_dir() + "/run" + std::to_string(counter++);
  const std::string cmd = std::string("\"") + MESHPLAN_BIN + "\" " + args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

/// The number after the first `"key": ` in a JSON text (the CLI's pretty-printed output).
inline double json_number(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ");
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + key.size() + 4));
}

inline std::string source_path(const std::string& rel) { return std::string(MESHPLAN_SOURCE_DIR) + "/" + rel; }

/// A user error as the house rules want it: exit 2, nothing on stdout, ONE stderr line starting
/// "meshplan: ", carrying a hint and naming each of `needles` (file, field, the value at fault).
inline void check_refusal(const CliResult& r, std::initializer_list<std::string> needles) {
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("meshplan: ", 0) == 0);
  CHECK(r.err.find("(hint: ") != std::string::npos);
  for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
  CHECK(r.out.empty());
}

/// Runs `meshplan <args>` and checks that it is refused as check_refusal says.
inline void check_bad(const std::string& args, std::initializer_list<std::string> needles) {
  INFO("meshplan " << args);
  check_refusal(run_cli(args), needles);
}

}  // namespace meshplan_test
