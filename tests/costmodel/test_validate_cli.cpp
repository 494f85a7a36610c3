// `meshplan validate` end to end: table and JSON output, exit codes (runs the built binary).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include "skip.h"

namespace {
struct Output {
  int exit_code = -1;
  std::string text;
};

Output run(const std::string& args) {
  const std::string bin = MESHPLAN_BIN;
  if (!std::filesystem::exists(bin)) meshplan_test::skip("meshplan binary not built (build target meshplan)");
  Output out;
  FILE* pipe = popen((bin + " " + args + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.text.append(buf, n);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}
}  // namespace

TEST_CASE("meshplan validate prints every shipped run with its error, exit 0") {
  const Output o = run("validate");
  INFO(o.text);
  CHECK(o.exit_code == 0);
  CHECK(o.text.find("korthikanti2022-table5") != std::string::npos);
  CHECK(o.text.find("gpt-1t selective+sp") != std::string::npos);
  CHECK(o.text.find("mean |error|") != std::string::npos);
  // Held-out and tuning runs are reported apart, per source file and overall.
  const size_t held = o.text.find("HELD-OUT runs"), tuning = o.text.find("TUNING runs");
  CHECK(held != std::string::npos);
  CHECK(tuning != std::string::npos);
  CHECK(o.text.find("korthikanti2022-table5", tuning) != std::string::npos);
  CHECK(o.text.substr(held, tuning - held).find("korthikanti2022-table5") == std::string::npos);
}

TEST_CASE("meshplan validate --format json carries schema, runs and the summary, deterministic") {
  const Output a = run("validate --format json " MESHPLAN_SOURCE_DIR "/validation/korthikanti2022-table5.yaml");
  INFO(a.text);
  CHECK(a.exit_code == 0);
  CHECK(a.text.find("\"schema\": \"meshplan.validate/1\"") != std::string::npos);
  CHECK(a.text.find("\"mean_abs_error\"") != std::string::npos);
  CHECK(a.text.find("\"predicted_s\"") != std::string::npos);
  CHECK(a.text.find("\"runs\": 8") != std::string::npos);
  CHECK(a.text.find("\"held_out\"") != std::string::npos);
  CHECK(a.text.find("\"tuning\"") != std::string::npos);
  CHECK(a.text.find("\"use\": \"tuning\"") != std::string::npos);
  const Output b = run("validate --format json " MESHPLAN_SOURCE_DIR "/validation/korthikanti2022-table5.yaml");
  CHECK(a.text == b.text);
}

TEST_CASE("meshplan validate with a bad directory or file: one line, exit 2") {
  for (const char* args : {"validate --dir /nonexistent-meshplan-dir", "validate /nonexistent-meshplan.yaml",
                           "validate --format xml"}) {
    const Output o = run(args);
    INFO(args << ": " << o.text);
    CHECK(o.exit_code == 2);
    CHECK(o.text.find('\n') == o.text.size() - 1);
  }
}
