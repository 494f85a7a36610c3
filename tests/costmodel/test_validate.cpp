// `meshplan validate` core: predicts the shipped published runs with the shipped profile.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "core/io.h"
#include "costmodel/validate.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
const std::string kSource = MESHPLAN_SOURCE_DIR;

ValidationReport predict_file(const std::string& name) {
  auto set = load_validation(kSource + "/validation/" + name);
  REQUIRE(set.ok());
  auto hw = load_hardware(set.value().hardware, kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  auto report = predict_set(set.value(), hw.value());
  REQUIRE(report.ok());
  return report.value();
}
}  // namespace

TEST_CASE("Korthikanti et al. 2022 Table 5: mean |error| <= 2 %, max <= 4 % (achieved 1.05 % / 3.2 %)") {
  const ValidationReport r = predict_file("korthikanti2022-table5.yaml");
  REQUIRE(r.runs.size() == 8);
  for (const auto& run : r.runs) {
    INFO(run.label << ": published " << run.published_s << " s, predicted " << run.predicted_s << " s");
    CHECK(std::fabs(run.error) <= 0.04);
    CHECK(run.estimate.fits);  // the paper ran them, so they must fit in 80 GB
    CHECK_FALSE(run.derived);
  }
  CHECK(r.mean_abs_error <= 0.02);  // issue 2's target is 5 %; Calculon reports 3.65 %
  CHECK(r.max_abs_error <= 0.04);
}

TEST_CASE("Narayanan et al. 2021 Table 2 PTD-P rows (not used to set the profile): mean <= 7 %, max <= 9 %") {
  const ValidationReport r = predict_file("narayanan2021-table2.yaml");
  REQUIRE(r.runs.size() == 6);
  for (const auto& run : r.runs) {
    INFO(run.label << ": published " << run.published_s << " s, predicted " << run.predicted_s << " s");
    CHECK(run.derived);
    CHECK(run.estimate.fits);
  }
  CHECK(r.mean_abs_error <= 0.07);  // achieved 5.7 %
  CHECK(r.max_abs_error <= 0.09);   // achieved 7.7 %
}

TEST_CASE("every shipped validation file loads and predicts") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSource + "/validation")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    INFO(entry.path().string());
    auto set = load_validation(entry.path().string());
    REQUIRE(set.ok());
    CHECK_FALSE(set.value().source.empty());
    auto hw = load_hardware(set.value().hardware, kSource + "/hardware-profiles");
    REQUIRE(hw.ok());
    auto report = predict_set(set.value(), hw.value());
    REQUIRE(report.ok());
    CHECK(report.value().runs.size() == set.value().runs.size());
  }
  CHECK(files >= 1);
}

TEST_CASE("published TFLOP/s become iteration times with the paper's FLOP formula") {
  const std::string text = R"(
source: test
hardware: a100-80gb-sxm
flops_formula: megatron
models:
  m: {n_embd: 12288, n_layer: 96, n_head: 96, vocab_size: 51200, n_positions: 2048}
runs:
  - {model: m, gpus: 1536, tp: 8, pp: 8, dp: 24, global_batch: 2304, tflops_per_gpu: 148}
)";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(set.ok());
  const double B = 2304, s = 2048, l = 96, h = 12288, V = 51200;
  const double flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  CHECK(published_iteration_s(set.value(), set.value().runs[0]) == Approx(flops / (148e12 * 1536)));
}

TEST_CASE("bad validation files are one-line errors naming the field") {
  const std::string models = "models:\n  m: {n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 100}\n";
  struct Case { std::string text, field; };
  const Case cases[] = {
      {"hardware: x\n" + models, "runs"},
      {"hardware: x\n" + models + "runs:\n  - {model: q, gpus: 1, global_batch: 1, iteration_s: 1}\n", "runs[0].model"},
      {"hardware: x\n" + models + "runs:\n  - {model: m, gpus: 1, global_batch: 1, recompute: most, iteration_s: 1}\n",
       "runs[0].recompute"},
      {"hardware: x\n" + models + "runs:\n  - {model: m, gpus: 1, global_batch: 1}\n", "runs[0].iteration_s"},
      {models + "runs:\n  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1}\n", "hardware"},
      {"hardware: x\nmodels:\n  m: {n_embd: 64, n_layer: 2, n_head: 5, vocab_size: 100}\nruns: []\n", "n_head"},
  };
  for (const Case& c : cases) {
    auto r = parse_validation(c.text, "bad.yaml");
    REQUIRE_FALSE(r.ok());
    INFO(r.error().one_line());
    CHECK(r.error().field == c.field);
    CHECK(r.error().one_line().find('\n') == std::string::npos);
  }
}

TEST_CASE("a run whose layout does not fit its GPU count is an error naming the run") {
  const std::string text = R"(
hardware: a100-80gb-sxm
models:
  m: {n_embd: 1024, n_layer: 4, n_head: 16, vocab_size: 1000}
runs:
  - {model: m, gpus: 8, tp: 4, pp: 1, dp: 1, global_batch: 8, iteration_s: 1}
)";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(set.ok());
  auto hw = load_hardware("a100-80gb-sxm", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  auto r = predict_set(set.value(), hw.value());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().file.find("t.yaml") != std::string::npos);
}
