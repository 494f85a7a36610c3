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

// A validation file in the temporary directory: Korthikanti's gpt-22b on A100 (Megatron, materialized
// attention) and the given `runs:` lines. Returns its path.
std::string write_gpt22b_file(const std::string& name, const std::string& runs) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  const std::string head =
      "source: \"test\"\nhardware: a100-80gb-sxm\ndtype: bf16\nseq_len: 2048\nbytes_per_param: megatron\n"
      "framework: megatron\nattention: materialized\n"
      "models:\n  gpt-22b: {n_embd: 6144, n_layer: 48, n_head: 64, n_inner: 24576, n_positions: 2048, "
      "vocab_size: 51200}\n"
      "runs:\n";
  std::fputs((head + runs).c_str(), f);
  std::fclose(f);
  return path;
}
}  // namespace

TEST_CASE("meshplan validate prints every shipped run with its error, exit 0") {
  const Output o = run("validate");
  INFO(o.text);
  CHECK(o.exit_code == 0);
  CHECK(o.text.find("korthikanti2022-table5") != std::string::npos);
  CHECK(o.text.find("gpt-1t selective+sp") != std::string::npos);
  CHECK(o.text.find("mean |error|") != std::string::npos);
  CHECK(o.text.find("mean signed") != std::string::npos);  // each group's bias, with its sign
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
  CHECK(a.text.find("\"mean_signed_error\"") != std::string::npos);
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

TEST_CASE("meshplan validate lists the published runs it predicts not to fit, in the table and in JSON") {
  // gpt-22b at tp 8 with 4 sequences fits an 80 GB A100 (Korthikanti's run); at tp 1 with no recompute its
  // 22B parameters x 18 bytes alone are ~400 GB, so the memory model must refuse it.
  const std::string path = write_gpt22b_file(
      "meshplan-validate-fits.yaml",
      "  - {label: fits-tp8, model: gpt-22b, gpus: 8, tp: 8, pp: 1, dp: 1, global_batch: 4, micro_batch: 4, "
      "recompute: full, iteration_s: 1.42}\n"
      "  - {label: too-big-tp1, model: gpt-22b, gpus: 1, tp: 1, pp: 1, dp: 1, global_batch: 4, micro_batch: 4, "
      "recompute: none, iteration_s: 10}\n");
  const Output t = run("validate " + path);
  INFO(t.text);
  CHECK(t.exit_code == 0);
  const size_t fits = t.text.find("FITS: 1 of these published runs");
  REQUIRE(fits != std::string::npos);
  CHECK(t.text.find("too-big-tp1", fits) != std::string::npos);
  CHECK(t.text.find("fits-tp8", fits) == std::string::npos);
  const Output j = run("validate --format json " + path);
  CHECK(j.text.find("\"not_fitting\": 1") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("meshplan validate lists publisher-reported regressions apart, in the table and in JSON") {
  const std::string path = write_gpt22b_file(
      "meshplan-validate-regression.yaml",
      "  - {label: scored, model: gpt-22b, gpus: 8, tp: 8, pp: 1, dp: 1, global_batch: 4, micro_batch: 4, "
      "recompute: full, iteration_s: 1.42}\n"
      "  - {label: regressed, model: gpt-22b, gpus: 8, tp: 8, pp: 1, dp: 1, global_batch: 4, micro_batch: 4, "
      "recompute: full, iteration_s: 2.84, use: regression, regression: \"the table's footnote\"}\n");
  const Output t = run("validate " + path);
  INFO(t.text);
  CHECK(t.exit_code == 0);
  const size_t held = t.text.find("HELD-OUT runs"), regr = t.text.find("REGRESSION runs");
  REQUIRE(held != std::string::npos);
  REQUIRE(regr != std::string::npos);
  CHECK(held < regr);
  CHECK(t.text.find("regression (not scored)") != std::string::npos);
  CHECK(t.text.find("1 runs", regr) != std::string::npos);
  const Output j = run("validate --format json " + path);
  INFO(j.text);
  CHECK(j.exit_code == 0);
  CHECK(j.text.find("\"use\": \"regression\"") != std::string::npos);
  CHECK(j.text.find("\"regression\": \"the table's footnote\"") != std::string::npos);
  const size_t top = j.text.rfind("\"held_out\": {");
  REQUIRE(top != std::string::npos);
  CHECK(j.text.find("\"runs\": 1", top) == j.text.find("\"runs\"", top));  // one scored run, not two
  std::remove(path.c_str());
}
