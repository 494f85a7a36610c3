// Shared helpers of the planner tests that touch files and processes: compare text with a golden
// file (MESHPLAN_UPDATE_GOLDEN=1 rewrites it), scratch files, run a shell command (any command, not
// only meshplan: tests/cli/cli_run.h's CliResult and slurp).
#pragma once
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli/cli_run.h"

namespace planner_test {

using meshplan_test::CliResult;
using meshplan_test::slurp;

/// `text` against tests/golden/<rel> (e.g. "planner/megatron_gpt3-175b.sh").
inline void check_golden(const std::string& rel, const std::string& text) {
  const std::string path = std::string(MESHPLAN_GOLDEN_DIR) + "/" + rel;
  if (const char* u = std::getenv("MESHPLAN_UPDATE_GOLDEN"); u && std::string(u) == "1")
    std::ofstream(path, std::ios::binary) << text;
  INFO("golden " << path << " (MESHPLAN_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(slurp(path) == text);
}

/// /tmp/meshplan_test_<pid>_<name>: unique per test process (ctest runs each case in its own).
inline std::string tmp_path(const std::string& name) {
  return "/tmp/meshplan_test_" + std::to_string(getpid()) + "_" + name;
}

inline std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = tmp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// Runs `cmd` through the shell, returns its stdout; `rc` gets the exit status.
inline std::string run(const std::string& cmd, int& rc) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int status = pclose(f);
  rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

/// Runs `cmd` through the shell with stdout and stderr captured apart.
inline CliResult sh(const std::string& cmd) {
  const std::string out = tmp_path("stdout"), err = tmp_path("stderr");
  const int status = std::system((cmd + " >" + out + " 2>" + err).c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

/// A user error: nothing on stdout, exactly one line on stderr, exit 2.
inline void require_one_line_exit_2(const CliResult& r) {
  INFO("stderr: " << r.err << "stdout: " << r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  REQUIRE(!r.err.empty());
  CHECK(r.err.find('\n') == r.err.size() - 1);  // exactly one line
  CHECK(r.err.rfind("meshplan: ", 0) == 0);
}

}  // namespace planner_test
