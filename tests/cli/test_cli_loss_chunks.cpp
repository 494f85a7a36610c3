// `meshplan run --loss-chunk-mib`: the loss in vocabulary chunks trains the same losses as the whole
// logits, the run JSON says how the loss ran, the prediction drops the logits it no longer keeps, and
// a negative budget is a one-line user error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
// llama-tiny at micro-batch 4 x 64 tokens: 256 rows x 256 vocabulary = 256 KiB of fp32 logits.
// (TP ranks' shards are chunked alike: tests/executor/test_model.cpp runs tp 2 with and without SP.)
CliResult run_tiny(const std::string& budget_mib) {
  return run_cli("run --backend cpu --model " + source_path("examples/models/llama-tiny.yaml") +
                 " --hardware a100-80gb-sxm --gpus 1 --global-batch 8 --seq 64 --micro-batch 4 --steps 3"
                 " --format json --loss-chunk-mib " + budget_mib);
}
}  // namespace

TEST_CASE("run cli: --loss-chunk-mib trains the same losses in vocabulary chunks and says so") {
  const CliResult whole = run_tiny("0");
  INFO("stderr: " << whole.err);
  REQUIRE(whole.exit_code == 0);
  const CliResult chunked = run_tiny("0.0625");  // 64 KiB: 64 columns, 4 chunks
  INFO("stderr: " << chunked.err);
  REQUIRE(chunked.exit_code == 0);
  const auto w = nlohmann::json::parse(whole.out), c = nlohmann::json::parse(chunked.out);
  CHECK(w["loss_chunks"]["chunks"] == 1);
  CHECK(w["loss_chunks"]["columns"] == 256);
  CHECK(c["loss_chunks"]["chunks"] == 4);
  CHECK(c["loss_chunks"]["columns"] == 64);
  CHECK(c["loss_chunks"]["budget_bytes"] == 65536);
  REQUIRE(w["steps"].size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    INFO("step " << i);
    CHECK(c["steps"][i]["loss"].get<double>() == Approx(w["steps"][i]["loss"].get<double>()).epsilon(1e-6));
  }
  // The prediction no longer holds the logits (256 KiB) but one 64 KiB chunk.
  const double saved = w["predicted"]["peak_bytes"].get<double>() - c["predicted"]["peak_bytes"].get<double>();
  CHECK(saved == Approx(262144.0 - 65536.0));
}

TEST_CASE("run cli: a negative, huge or NaN --loss-chunk-mib is one line and exit 2") {
  for (const char* bad : {"-1", "1e30", "nan"}) {
    const CliResult r = run_tiny(bad);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--loss-chunk-mib") != std::string::npos);
    CHECK(r.err.find("must be 0 or more") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}
