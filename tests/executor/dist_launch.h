// Helpers for tests that run under mpirun: a test case re-launches its own binary under
// MESHPLAN_MPIEXEC with N ranks (filtered to itself), and each rank then runs the MPI part.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "skip.h"

namespace meshplan_test {

/// True when this process was started by mpirun (OpenMPI sets OMPI_COMM_WORLD_SIZE).
inline bool inside_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

/// The mpirun command prefix for `np` ranks, root- and oversubscription-safe (CI runs as root on
/// 2 cores).
inline std::string mpirun_prefix(int np) {
  return std::string(MESHPLAN_MPIEXEC) + " --oversubscribe --allow-run-as-root -np " +
         std::to_string(np) + " ";
}

/// Runs `command` through the shell; returns its exit status (or -1) and captures stdout+stderr.
inline int run_command(const std::string& command, std::string* output = nullptr) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  std::string out;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, got);
  int status = pclose(pipe);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// `name` as a Catch2 filter that matches exactly it: ',' separates filters and '[' opens a tag, so
/// both are escaped (the harness fails a run that matches no test case: tests/catch_main.cpp).
inline std::string catch_filter(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == ',' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

/// Re-runs this test binary under mpirun with `np` ranks, only the test case `name`.
inline int launch_self(int np, const std::string& name, std::string* output) {
  if (std::string(MESHPLAN_MPIEXEC).empty()) skip("no mpiexec found at configure time");
  char self[4096] = {0};
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (len <= 0) skip("cannot locate the test binary (/proc/self/exe)");
  return run_command(mpirun_prefix(np) + self + " \"" + catch_filter(name) + "\"", output);
}

}  // namespace meshplan_test
