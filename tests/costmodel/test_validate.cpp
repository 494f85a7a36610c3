// `meshplan validate` core: predicts the shipped published runs with the shipped profile.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "core/cuda_graphs.h"
#include "core/io.h"
#include "core/recompute_modules.h"
#include "costmodel/hsdp.h"
#include "costmodel/validate.h"
#include "fixtures.h"

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

TEST_CASE("Korthikanti et al. 2022 Table 5: mean |error| <= 2 %, max <= 4 % (achieved 0.99 % / 2.99 %)") {
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
  const HardwareProfile hw = meshplan_test::a100();
  CHECK(published_iteration_s(set.value(), set.value().runs[0], hw) == Approx(flops / (148e12 * 1536)));
}

TEST_CASE("DeepSpeed ZeRO-3 rows of Narayanan Table 2 (held out): mean |error| <= 12 % (was 53.8 %)") {
  // Before bucketed fetches, per-layer exposure and the ring latency term (issue 10) these were
  // predicted 33-71 % too fast; now 10.6 % mean, 23.5 % max.
  const ValidationReport r = predict_file("narayanan2021-table2-zero3.yaml");
  REQUIRE(r.runs.size() == 6);
  CHECK(r.held_out.runs == 6);
  CHECK(r.mean_abs_error <= 0.12);
  CHECK(r.max_abs_error <= 0.25);
}

// A 1.3B-parameter FSDP file on A100 whose first run publishes 20,000 tokens/s per GPU; tests append runs.
const std::string kMosaicHead = R"(
source: test
hardware: a100-80gb-sxm
flops_formula: mosaic
mfu_peak_tflops: 312
framework: fsdp
models:
  m: {n_embd: 2048, n_layer: 24, n_head: 16, vocab_size: 50368, n_positions: 2048, dropout: false}
runs:
  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 64, micro_batch: 8, tokens_per_s_per_gpu: 20000}
)";

TEST_CASE("tokens/s per GPU and MFU become iteration times - cp > 1 and FP8 runs are predicted") {
  const std::string text = kMosaicHead + R"(  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 64, micro_batch: 8, mfu: 0.5, use: tuning}
  - {model: m, gpus: 8, dp: 4, cp: 2, zero: 3, global_batch: 64, micro_batch: 8, tokens_per_s_per_gpu: 1}
  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 64, micro_batch: 8, tokens_per_s_per_gpu: 1, fp8: true}
)";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(set.ok());
  const ValidationSet& v = set.value();
  HardwareProfile hw = meshplan_test::a100();
  hw.peak_flops["fp8"] = 624e12;  // the FP8 run needs an fp8 peak
  CHECK(published_iteration_s(v, v.runs[0], hw) == Approx(64.0 * 2048 / (20000.0 * 8)));
  const ModelSpec& m = v.models.front().second;
  const double flops = 64 * (6 * m.num_parameters() * 2048 + 12.0 * 24 * 2048 * 2048.0 * 2048);
  CHECK(published_iteration_s(v, v.runs[1], hw) == Approx(flops / (0.5 * 312e12 * 8)));
  CHECK(v.runs[0].attention == AttentionKind::Fused);
  CHECK(run_framework(v.runs[0]).sharding.granularity == ShardGranularity::PerUnit);
  auto report = predict_set(v, hw);
  INFO((report.ok() ? std::string() : report.error().one_line()));
  REQUIRE(report.ok());
  const ValidationReport& r = report.value();
  CHECK(r.runs[2].skipped.empty());
  CHECK(r.runs[3].skipped.empty());
  CHECK(r.skipped == 0);
  CHECK(r.held_out.runs == 3);
  CHECK(run_config(v.runs[2]).cp == 2);
  CHECK(run_fp8_recipe(v.runs[3]) == Fp8Recipe::Delayed);
  // Same work per GPU, linear GEMMs at twice the peak: the FP8 run predicts a shorter step.
  CHECK(r.runs[3].predicted_s < r.runs[0].predicted_s);
  CHECK(r.tuning.runs == 1);
  CHECK(r.held_out.mean_abs_error ==
        Approx((std::fabs(r.runs[0].error) + std::fabs(r.runs[2].error) + std::fabs(r.runs[3].error)) / 3));
  CHECK(r.tuning.mean_abs_error == Approx(std::fabs(r.runs[1].error)));
  // The signed mean keeps the direction (a group predicted too fast has a negative bias).
  CHECK(r.held_out.mean_signed_error == Approx((r.runs[0].error + r.runs[2].error + r.runs[3].error) / 3));
  CHECK(r.tuning.mean_signed_error == Approx(r.runs[1].error));
  CHECK(std::fabs(r.held_out.mean_signed_error) <= r.held_out.mean_abs_error);
}

TEST_CASE("use: regression - predicted and printed, not scored, only with the publisher's statement") {
  const std::string& head = kMosaicHead;
  auto set = parse_validation(head + R"(  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 64, micro_batch: 8,
     tokens_per_s_per_gpu: 5000, use: regression, regression: "footnote: a known regression"}
)",
                              "t.yaml");
  REQUIRE(set.ok());
  CHECK(set.value().runs[1].regression == "footnote: a known regression");
  CHECK_FALSE(set.value().runs[1].held_out());
  CHECK(set.value().runs[0].held_out());
  auto report = predict_set(set.value(), meshplan_test::a100());
  REQUIRE(report.ok());
  const ValidationReport& r = report.value();
  REQUIRE(r.runs.size() == 2);
  // Same layout, a quarter of the throughput: the regressed figure misses by far more, and is not
  // in the held-out score.
  CHECK(std::fabs(r.runs[1].error) > std::fabs(r.runs[0].error));
  CHECK(r.held_out.runs == 1);
  CHECK(r.held_out.mean_abs_error == Approx(std::fabs(r.runs[0].error)));
  CHECK(r.regression.runs == 1);
  CHECK(r.regression.mean_abs_error == Approx(std::fabs(r.runs[1].error)));
  CHECK(r.tuning.runs == 0);
  // Without the publisher's statement, or a statement on a scored run: refused, naming the field.
  auto bare = parse_validation(head + "  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 64, micro_batch: 8, "
                                      "tokens_per_s_per_gpu: 5000, use: regression}\n",
                               "t.yaml");
  REQUIRE_FALSE(bare.ok());
  CHECK_THAT(bare.error().one_line(), Catch::Contains("regression"));
  auto stray = parse_validation(head + "  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 64, micro_batch: 8, "
                                       "tokens_per_s_per_gpu: 5000, regression: \"x\"}\n",
                                "t.yaml");
  REQUIRE_FALSE(stray.ok());
  CHECK_THAT(stray.error().one_line(), Catch::Contains("use: regression"));
}

TEST_CASE("fp8_recipe keys map to Transformer Engine's recipes - mxfp8 included, unknown names refused") {
  const std::string head = R"(
source: test
hardware: b200
framework: nemo
models:
  m: {n_embd: 2048, n_layer: 24, n_head: 16, vocab_size: 50368, n_positions: 2048, dropout: false}
runs:
)";
  const std::string row = "  - {model: m, gpus: 8, dp: 8, zero: 1, global_batch: 64, micro_batch: 8, "
                          "tokens_per_s_per_gpu: 1, fp8: true, fp8_recipe: ";
  const std::pair<const char*, Fp8Recipe> cases[] = {{"current-scaling", Fp8Recipe::Current},
                                                     {"blockwise", Fp8Recipe::Blockwise},
                                                     {"mxfp8", Fp8Recipe::Mxfp8},
                                                     {"delayed", Fp8Recipe::Delayed}};
  for (const auto& [name, recipe] : cases) {
    auto set = parse_validation(head + row + name + "}\n", "t.yaml");
    INFO(name);
    REQUIRE(set.ok());
    CHECK(run_fp8_recipe(set.value().runs[0]) == recipe);
  }
  auto bad = parse_validation(head + row + "nvfp4}\n", "t.yaml");
  REQUIRE(!bad.ok());
  CHECK(bad.error().one_line().find("mxfp8") != std::string::npos);  // the hint names the accepted recipes
}

// A one-run validation file whose run carries `key` and, last, `framework: <fw>}` (append fw + "}\n").
static std::string one_run_with(const std::string& key) {
  return R"(
source: test
hardware: h100-80gb-sxm
models:
  m: {n_embd: 2048, n_layer: 24, n_head: 16, vocab_size: 50368, n_positions: 2048, dropout: false}
runs:
  - {model: m, gpus: 8, dp: 8, zero: 1, global_batch: 64, micro_batch: 8, tokens_per_s_per_gpu: 1, )" +
         key + ", framework: ";
}

TEST_CASE("moe_a2a_overlap is read for megatron and nemo runs and refused for other frameworks") {
  const std::string row = one_run_with("moe_a2a_overlap: true");
  for (const char* fw : {"megatron", "nemo"}) {
    auto ok = parse_validation(row + fw + "}\n", "t.yaml");
    INFO(fw);
    REQUIRE(ok.ok());
    CHECK(ok.value().runs[0].moe_a2a_overlap);
  }
  auto bad = parse_validation(row + "deepspeed}\n", "t.yaml");
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "runs[0].moe_a2a_overlap");
}

TEST_CASE("fused_grouped_mlp and yarn_rope_fused are read for megatron and nemo runs, reach the knobs, refused elsewhere") {
  for (const char* key : {"fused_grouped_mlp", "yarn_rope_fused"}) {
    const std::string row = one_run_with(std::string(key) + ": true");
    for (const char* fw : {"megatron", "nemo"}) {
      auto ok = parse_validation(row + fw + "}\n", "t.yaml");
      INFO(key << " " << fw);
      REQUIRE(ok.ok());
      const FrameworkKnobs k = run_framework(ok.value().runs[0]);
      CHECK(k.megatron_core_model_code);
      CHECK((std::string(key) == "fused_grouped_mlp" ? k.fused_grouped_mlp : k.yarn_rope_fused));
    }
    auto bad = parse_validation(row + "torchtitan}\n", "t.yaml");
    REQUIRE(!bad.ok());
    CHECK(bad.error().field == std::string("runs[0].") + key);
  }
  // Absent: both off, and only Megatron-Core's frameworks run its model code.
  auto plain = parse_validation(one_run_with("recompute: none") + "fsdp}\n", "t.yaml");
  REQUIRE(plain.ok());
  const FrameworkKnobs k = run_framework(plain.value().runs[0]);
  CHECK_FALSE(k.megatron_core_model_code);
  CHECK_FALSE(k.fused_grouped_mlp);
  CHECK_FALSE(k.yarn_rope_fused);
}

TEST_CASE("forward_prefetch / backward_prefetch are read for fsdp runs, refused elsewhere, and reach the knobs") {
  auto ok = parse_validation(one_run_with("forward_prefetch: true, backward_prefetch: post") + "fsdp}\n", "t.yaml");
  REQUIRE(ok.ok());
  const FrameworkKnobs k = run_framework(ok.value().runs[0]);
  CHECK(k.sharding.forward_prefetch);
  CHECK(k.sharding.backward_prefetch == BackwardPrefetch::Post);
  // Absent: what --framework fsdp costs (forward prefetch, BACKWARD_PRE: FSDP2, as its export runs).
  auto def = parse_validation(one_run_with("note: x") + "fsdp}\n", "t.yaml");
  REQUIRE(def.ok());
  CHECK(run_framework(def.value().runs[0]).sharding.forward_prefetch);
  CHECK(run_framework(def.value().runs[0]).sharding.backward_prefetch == BackwardPrefetch::Pre);
  auto other = parse_validation(one_run_with("backward_prefetch: post") + "deepspeed}\n", "t.yaml");
  REQUIRE(!other.ok());
  CHECK(other.error().field == "runs[0].backward_prefetch");
  auto bad = parse_validation(one_run_with("backward_prefetch: BACKWARD_POST") + "fsdp}\n", "t.yaml");
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "runs[0].backward_prefetch");
}

TEST_CASE("llm-foundry files: Composer's BACKWARD_POST, except the Large Scale table's forward prefetch and BACKWARD_PRE") {
  for (const char* f : {"mosaicml-llmfoundry-a100-40gb.yaml", "mosaicml-llmfoundry-a100-80gb.yaml",
                        "mosaicml-llmfoundry-h100.yaml", "mosaicml-llmfoundry-h100-fp8.yaml",
                        "mosaicml-llmfoundry-a100-80gb-mb-sweep.yaml"}) {
    INFO(f);
    auto set = load_validation(kSource + "/validation/" + f);
    REQUIRE(set.ok());
    int large = 0;
    for (const ValidationRun& r : set.value().runs) {
      const ShardingKnobs k = run_framework(r).sharding;
      // sweep.py at 5e85bd62d passes --fsdp_config_forward_prefetch true --fsdp_config_backward_prefetch
      // BACKWARD_PRE for the H100 >= 128-GPU table; the older tables ran Composer's defaults.
      const bool large_scale = std::string(f) == "mosaicml-llmfoundry-h100.yaml" && r.gpus >= 128;
      large += large_scale;
      CHECK(k.forward_prefetch == large_scale);
      CHECK(k.backward_prefetch == (large_scale ? BackwardPrefetch::Pre : BackwardPrefetch::Post));
    }
    CHECK(large == (std::string(f) == "mosaicml-llmfoundry-h100.yaml" ? 18 : 0));
  }
}

TEST_CASE("fms-fsdp: HSDP rows shard within groups of 8 of 128, a shard group of the whole DP is plain FSDP") {
  const ValidationReport r = predict_file("ibm-fms-fsdp-a100.yaml");
  REQUIRE(r.runs.size() == 4);
  const double params[] = {6738415616.0, 13015864320.0};  // Llama 2 7B and 13B, exact
  for (int i : {0, 1}) {
    INFO(r.runs[i].label);
    CHECK(r.runs[i].skipped.empty());
    CHECK(r.runs[i].estimate.config.shard_group == 8);
    // Optimizer state (fp32 master, m, v: 12 B/param) over the 8 ranks of a shard group, not 128.
    CHECK(r.runs[i].estimate.memory.optimizer_bytes == Approx(params[i] * 12.0 / 8.0).epsilon(1e-9));
    CHECK(std::fabs(r.runs[i].error) < 0.30);  // -20.7 % and -28.2 % on 2026-11-28 (validation/README.md)
  }
  for (int i : {2, 3}) {
    INFO(r.runs[i].label);
    CHECK(r.runs[i].skipped.empty());
    CHECK(hsdp_replicas(r.runs[i].estimate.config) == 1);
    CHECK(std::fabs(r.runs[i].error) < 0.10);  // -3.5 % and -3.4 % on 2026-11-28
  }
}

TEST_CASE("Korthikanti Table 5 is the tuning set, materialized, the ZeRO-3 rows are DeepSpeed") {
  auto k = load_validation(kSource + "/validation/korthikanti2022-table5.yaml");
  REQUIRE(k.ok());
  for (const auto& run : k.value().runs) {
    CHECK(run.tuning);
    CHECK(run.attention == AttentionKind::Materialized);
  }
  auto z = load_validation(kSource + "/validation/narayanan2021-table2-zero3.yaml");
  REQUIRE(z.ok());
  CHECK(run_framework(z.value().runs[0]).sharding.granularity == ShardGranularity::Buckets);
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
      {"hardware: x\nfused_kernel: xformers\n" + models + "runs: []\n", "fused_kernel"},
      {"hardware: x\n" + models + "runs:\n  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, fused_kernel: sdpa}\n",
       "runs[0].fused_kernel"},
      // dp_all_reduce describes a ZeRO-1 reduction; on ZeRO-0/2/3 it would be silently meaningless.
      {"hardware: x\n" + models + "runs:\n  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, dp_all_reduce: true}\n",
       "runs[0].dp_all_reduce"},
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

TEST_CASE("a published TP group wider than a node is costed as it ran, with its collectives across nodes") {
  // nanotron's 80B ran TP 16 over two 8-GPU nodes: validate predicts it (the planner keeps TP inside a node).
  const std::string head = R"(
hardware: h100-80gb-sxm
models:
  m: {n_embd: 4096, n_layer: 4, n_head: 32, vocab_size: 32000}
runs:
)";
  auto hw = load_hardware("h100-80gb-sxm", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  auto predict = [&](int tp) {
    auto set = parse_validation(head + "  - {model: m, gpus: 16, tp: " + std::to_string(tp) + ", dp: " +
                                    std::to_string(16 / tp) + ", global_batch: 16, sequence_parallel: true, iteration_s: 1}\n",
                                "t.yaml");
    REQUIRE(set.ok());
    auto r = predict_set(set.value(), hw.value());
    INFO((r.ok() ? std::string() : r.error().one_line()));
    REQUIRE(r.ok());
    return r.value().runs.front().estimate;
  };
  const StepEstimate inside = predict(8), across = predict(16);
  CHECK(across.fits);
  // Each TP collective now crosses the network: more TP time than at TP 8 inside the node, though half the data.
  CHECK(across.time.tp_comm_s > inside.time.tp_comm_s);
}

TEST_CASE("Megatron-LM 2024 H100 table: every published layout fits, with the flags its README states") {
  // The README states --overlap-param-gather (which Megatron allows only with the distributed
  // optimizer: zero 1) and --tp-comm-overlap; Megatron-Core attends through TE's cuDNN kernel.
  // Before (issue 10, 18 B/param unsharded): 7 of 9 did not fit, 20.5 % mean, 78 % max.
  auto set = load_validation(kSource + "/validation/megatron-lm2024-h100-weak-scaling.yaml");
  REQUIRE(set.ok());
  for (const ValidationRun& run : set.value().runs) {
    CHECK(run.zero_stage == 1);
    CHECK(run.overlap_param_gather);
    CHECK(run.tp_comm_overlap == (run.tp > 1));
    const FrameworkKnobs k = run_framework(run);
    CHECK(k.fused_kernel == FusedAttentionKernel::Cudnn);
    CHECK(k.tp_comm_overlap == run.tp_comm_overlap);
    CHECK(k.param_gather_overlap);
  }
  const ValidationReport r = predict_file("megatron-lm2024-h100-weak-scaling.yaml");
  REQUIRE(r.runs.size() == 9);
  for (const RunPrediction& run : r.runs) CHECK(run.estimate.fits);
  CHECK(r.mean_abs_error <= 0.20);  // achieved 9.3 % (issue 10 target 12 %: met for this group)
  CHECK(r.max_abs_error <= 0.37);   // achieved 36.0 % (the 32B row; 32.3 % before the sustained-clock re-reads)
}

TEST_CASE("BLOOM 176B is predicted on Jean Zay's network: 4 x 100 Gb/s Omni-Path per node, 135 Gb/s delivered") {
  auto set = load_validation(kSource + "/validation/bigscience2022-bloom-176b.yaml");
  REQUIRE(set.ok());
  auto hw = load_hardware(set.value().hardware, kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  CHECK(hw.value().inter_node.bandwidth_bytes_per_s == Approx(4 * 100e9 / 8 / 8));  // 6.25 GB/s per GPU
  CHECK(hw.value().inter_node.efficiency == Approx(135.0 / 400.0));                // measured on that fabric
  // bf16 with ZERO_STAGE=0: DeepSpeed's BF16_Optimizer all-reduces its fp32 gradients as bf16 and adds
  // every micro-batch's bf16 gradients into them in a pass of its own (FrameworkKnobs).
  for (const ValidationRun& run : set.value().runs) {
    CHECK(run.zero_stage == 1);
    const FrameworkKnobs k = run_framework(run);
    CHECK(k.dp_all_reduce);
    CHECK(k.dp_reduce_bytes == 2.0);
    CHECK(k.grad_accumulation_pass);
  }
  const ValidationReport r = predict_file("bigscience2022-bloom-176b.yaml");
  REQUIRE(r.runs.size() == 2);
  CHECK(std::fabs(r.runs[0].error) <= 0.06);  // full-batch iteration: achieved -4.6 % (was -15.5 %)
  CHECK(std::fabs(r.runs[1].error) <= 0.10);  // GBS 16 ramp-up: achieved -8.3 % (was -27.8 %)
}

TEST_CASE("a file's fused_kernel applies to its runs, a run's own overrides it, else the framework's rule") {
  const std::string text = R"(
hardware: a100-80gb-sxm
framework: fsdp
fused_kernel: triton
models:
  m: {n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 100}
runs:
  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1}
  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, fused_kernel: flash2}
  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, fused_kernel: "", framework: megatron}
)";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(set.ok());
  CHECK(run_framework(set.value().runs[0]).fused_kernel == FusedAttentionKernel::Triton);
  CHECK(run_framework(set.value().runs[1]).fused_kernel == FusedAttentionKernel::FlashAttention2);
  CHECK(run_framework(set.value().runs[2]).fused_kernel == FusedAttentionKernel::Cudnn);  // Megatron's rule
}

TEST_CASE("llm-foundry files: runs name the kernel their benchmark script ran (triton, flash2 where sweep.py said flash)") {
  for (const char* f : {"mosaicml-llmfoundry-a100-40gb.yaml", "mosaicml-llmfoundry-a100-80gb.yaml",
                        "mosaicml-llmfoundry-h100.yaml", "mosaicml-llmfoundry-h100-fp8.yaml"}) {
    INFO(f);
    auto set = load_validation(kSource + "/validation/" + f);
    REQUIRE(set.ok());
    int flash2 = 0;
    for (const ValidationRun& r : set.value().runs) {
      const FrameworkKnobs k = run_framework(r);
      if (k.fused_kernel == FusedAttentionKernel::FlashAttention2) {
        ++flash2;
        CHECK(k.unpad_attention);  // flash_attn_fn unpads; the Triton path does not
        CHECK(r.gpus >= 128);      // only the 2024 "Large Scale" table's 1b, 3b, 7b and 70b rows
      } else {
        CHECK(k.fused_kernel == FusedAttentionKernel::Triton);
        CHECK_FALSE(k.unpad_attention);
      }
    }
    CHECK(flash2 == (std::string(f) == "mosaicml-llmfoundry-h100.yaml" ? 12 : 0));  // 4 sizes x 128/256/512 GPUs
  }
}

TEST_CASE("activation_offload_layers is read for megatron and nemo runs, refused elsewhere, and costed") {
  const std::string row = one_run_with("activation_offload_layers: 12");
  for (const char* fw : {"megatron", "nemo"}) {
    auto ok = parse_validation(row + fw + "}\n", "t.yaml");
    INFO(fw);
    REQUIRE(ok.ok());
    CHECK(ok.value().runs[0].activation_offload_layers == 12);
    CHECK(run_framework(ok.value().runs[0]).activation_offload_layers == 12);
  }
  auto bad = parse_validation(row + "fsdp}\n", "t.yaml");
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "runs[0].activation_offload_layers");
  // Megatron-Bridge's GB200 Llama 3.1 405B FP8-CS Megatron-FSDP preset offloads 95 of 126 layers: the
  // published run fits only so (a 298 GB peak per GPU without it).
  const ValidationReport r = predict_file("megatron-bridge-gb200.yaml");
  bool seen = false;
  for (const RunPrediction& run : r.runs)
    if (run.label == "MB 25.09 llama-3.1-405b 128 GB200 fp8-cs fsdp") {
      seen = true;
      CHECK(run.estimate.fits);
    }
  CHECK(seen);
}

TEST_CASE("tp_async_allreduce is read from the file and per run, true by default, and reaches the knobs") {
  auto plain = parse_validation(one_run_with("recompute: none") + "megatron}\n", "t.yaml");
  REQUIRE(plain.ok());
  CHECK(plain.value().runs[0].tp_async_allreduce);
  CHECK(run_framework(plain.value().runs[0]).tp_async_allreduce);
  std::string file = one_run_with("recompute: none") + "megatron-deepspeed}\n";
  file.insert(file.find("models:"), "tp_async_allreduce: false\n");
  auto off = parse_validation(file, "t.yaml");
  INFO((off.ok() ? std::string() : off.error().one_line()));
  REQUIRE(off.ok());
  CHECK_FALSE(off.value().runs[0].tp_async_allreduce);
  CHECK_FALSE(run_framework(off.value().runs[0]).tp_async_allreduce);
  std::string back = one_run_with("tp_async_allreduce: true") + "megatron-deepspeed}\n";
  back.insert(back.find("models:"), "tp_async_allreduce: false\n");
  auto on = parse_validation(back, "t.yaml");
  REQUIRE(on.ok());
  CHECK(on.value().runs[0].tp_async_allreduce);
  auto bad = parse_validation(one_run_with("tp_async_allreduce: 2") + "megatron}\n", "t.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].tp_async_allreduce");
}

TEST_CASE("fp8_param_gather is read per run and from the file, and reaches the run's framework knobs") {
  auto on = parse_validation(one_run_with("fp8_param_gather: true") + "megatron}\n", "t.yaml");
  REQUIRE(on.ok());
  CHECK(on.value().runs[0].fp8_param_gather);
  CHECK(run_framework(on.value().runs[0]).fp8_param_gather);
  // A file-level default, which a run may turn off (Megatron-Bridge's subchannel recipe does not set it).
  std::string file = one_run_with("fp8_param_gather: false") + "megatron}\n";
  file.insert(file.find("models:"), "fp8_param_gather: true\n");
  auto off = parse_validation(file, "t.yaml");
  REQUIRE(off.ok());
  CHECK_FALSE(off.value().runs[0].fp8_param_gather);
  std::string inherit = one_run_with("recompute: none") + "megatron}\n";
  inherit.insert(inherit.find("models:"), "fp8_param_gather: true\n");
  auto in = parse_validation(inherit, "t.yaml");
  INFO((in.ok() ? std::string() : in.error().one_line()));
  REQUIRE(in.ok());
  CHECK(in.value().runs[0].fp8_param_gather);
  auto bad = parse_validation(one_run_with("fp8_param_gather: 3") + "megatron}\n", "t.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].fp8_param_gather");
}

TEST_CASE("validation files refuse unknown keys, naming the near miss") {
  const std::string models = "models:\n  m: {n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 100}\n";
  // A misspelt key would leave its run costed as if the key were absent.
  auto run = parse_validation("hardware: x\n" + models +
                                  "runs:\n  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, tp_comm_overlp: true}\n",
                              "typo.yaml");
  REQUIRE_FALSE(run.ok());
  CHECK(run.error().field == "runs[0].tp_comm_overlp");
  CHECK(run.error().hint.find("did you mean tp_comm_overlap?") != std::string::npos);
  auto file = parse_validation("hardware: x\nmfu_peak_tfops: 989\n" + models + "runs: []\n", "typo.yaml");
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().field == "mfu_peak_tfops");
  CHECK(file.error().hint.find("did you mean mfu_peak_tflops?") != std::string::npos);
  auto far = parse_validation("hardware: x\n" + models +
                                  "runs:\n  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, flux_capacitor: 1}\n",
                              "typo.yaml");
  REQUIRE_FALSE(far.ok());
  CHECK(far.error().hint.find("did you mean") == std::string::npos);  // no key is near it
  // The documentation and published-fact keys are known.
  auto ok = parse_validation("hardware: x\n" + models +
                                 "runs:\n  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, assumed: [seq], "
                                 "note: n, async_tp: true, memory_gib: 20.5, tokens_per_batch_published: 4M}\n",
                             "ok.yaml");
  INFO((ok.ok() ? std::string() : ok.error().one_line()));
  REQUIRE(ok.ok());
  CHECK(ok.value().runs[0].async_tp);
  CHECK(ok.value().runs[0].published_memory_gib == Approx(20.5));
}

TEST_CASE("published parameter counts are checked against the model: exact, or to the source's 0.1 B") {
  auto hw = load_hardware("a100-80gb-sxm", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  const std::string head = "hardware: a100-80gb-sxm\nmodels:\n  m: {n_embd: 1024, n_layer: 4, n_head: 16, vocab_size: 1000}\n"
                           "runs:\n  - {model: m, gpus: 8, dp: 8, global_batch: 8, iteration_s: 1, ";
  auto set = parse_validation(head + "published_params: 1}\n", "t.yaml");
  REQUIRE(set.ok());
  const std::optional<int64_t> exact = set.value().models[0].second.exact_parameters();
  REQUIRE(exact.has_value());
  auto wrong = predict_set(set.value(), hw.value());
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().field == "published_params");
  CHECK(wrong.error().message.find(std::to_string(*exact)) != std::string::npos);
  auto right = parse_validation(head + "published_params: " + std::to_string(*exact) + "}\n", "t.yaml");
  REQUIRE(right.ok());
  CHECK(predict_set(right.value(), hw.value()).ok());
  // Billions as a source prints them: within half of the last digit (0.05 B) of the exact count.
  char near[64], off[64];
  std::snprintf(near, sizeof near, "%.1f", std::round(*exact / 1e8) / 10.0);
  std::snprintf(off, sizeof off, "%.1f", std::round(*exact / 1e8) / 10.0 + 0.1);
  auto b_ok = parse_validation(head + "published_params_billion: " + near + "}\n", "t.yaml");
  REQUIRE(b_ok.ok());
  CHECK(predict_set(b_ok.value(), hw.value()).ok());
  auto b_bad = parse_validation(head + "published_params_billion: " + off + "}\n", "t.yaml");
  REQUIRE(b_bad.ok());
  auto r = predict_set(b_bad.value(), hw.value());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "published_params_billion");
}

TEST_CASE("a run's own mfu_peak_tflops overrides the file's, and published memory is compared") {
  auto hw = load_hardware("a100-80gb-sxm", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  const std::string text = R"(
hardware: a100-80gb-sxm
flops_formula: model
mfu_peak_tflops: 312
models:
  m: {n_embd: 1024, n_layer: 4, n_head: 16, vocab_size: 1000}
runs:
  - {model: m, gpus: 8, dp: 8, global_batch: 8, mfu: 0.5}
  - {model: m, gpus: 8, dp: 8, global_batch: 8, mfu: 0.5, mfu_peak_tflops: 624, memory_gib: 10}
)";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(set.ok());
  // The same MFU against twice the peak is twice the FLOP rate: half the time.
  CHECK(published_iteration_s(set.value(), set.value().runs[1], hw.value()) ==
        Approx(published_iteration_s(set.value(), set.value().runs[0], hw.value()) / 2.0));
  auto report = predict_set(set.value(), hw.value());
  REQUIRE(report.ok());
  const RunPrediction& with = report.value().runs[1];
  CHECK(report.value().runs[0].published_memory_bytes == 0);
  CHECK(with.published_memory_bytes == Approx(10.0 * 1073741824.0));
  CHECK(with.memory_error() == Approx((with.estimate.memory.peak_bytes - 10.0 * 1073741824.0) / (10.0 * 1073741824.0)));
}

TEST_CASE("mtp_layers and layers_per_stage are read per run, reach the problem and config, and are checked") {
  const std::string head = R"(
source: test
hardware: h100-80gb-sxm
models:
  m: {n_embd: 2048, n_layer: 24, n_head: 16, vocab_size: 50368, n_positions: 2048, dropout: false}
runs:
  - {model: m, gpus: 16, tp: 1, pp: 4, dp: 4, zero: 1, global_batch: 64, micro_batch: 1, tokens_per_s_per_gpu: 1, )";
  auto on = parse_validation(head + "mtp_layers: 1, layers_per_stage: [7, 7, 7, 3], framework: megatron}\n", "t.yaml");
  REQUIRE(on.ok());
  const ValidationRun& run = on.value().runs[0];
  CHECK(run.mtp_layers == std::optional<int64_t>(1));
  CHECK(run.layers_per_stage == std::vector<int>{7, 7, 7, 3});
  const HardwareProfile hw = load_hardware("h100-80gb-sxm", MESHPLAN_SOURCE_DIR "/hardware-profiles").value();
  CHECK(run_problem(on.value(), run, hw).model.mtp_layers == 1);
  CHECK(run_config(run).layers_per_stage == run.layers_per_stage);
  auto plain = parse_validation(head + "framework: megatron}\n", "t.yaml");
  REQUIRE(plain.ok());
  const auto a = predict_run(on.value(), run, hw), b = predict_run(plain.value(), plain.value().runs[0], hw);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value().estimate.time.step_s != b.value().estimate.time.step_s);
  // Refused: MTP outside Megatron-Core's frameworks, negative counts, a split that does not add up.
  auto fsdp = parse_validation(head + "mtp_layers: 1, framework: fsdp}\n", "t.yaml");
  REQUIRE(!fsdp.ok());
  CHECK(fsdp.error().field == "runs[0].mtp_layers");
  auto negative = parse_validation(head + "layers_per_stage: [7, -1, 7, 3], framework: megatron}\n", "t.yaml");
  REQUIRE(!negative.ok());
  CHECK(negative.error().field == "runs[0].layers_per_stage[1]");
  auto scalar = parse_validation(head + "layers_per_stage: 6, framework: megatron}\n", "t.yaml");
  REQUIRE(!scalar.ok());
  auto sum = parse_validation(head + "layers_per_stage: [7, 7, 7, 7], framework: megatron}\n", "t.yaml");
  REQUIRE(sum.ok());
  CHECK_FALSE(predict_run(sum.value(), sum.value().runs[0], hw).ok());
}

// A one-run validation file of a 16-expert MoE model at EP 16, open after the run's common keys: append
// the keys under test and "}\n".
static std::string moe_run_head() {
  return R"(
source: test
hardware: h100-80gb-sxm
models:
  m: {hidden_size: 1024, num_hidden_layers: 4, num_attention_heads: 8, intermediate_size: 2048, vocab_size: 1000, num_local_experts: 16, num_experts_per_tok: 2}
runs:
  - {model: m, gpus: 16, dp: 16, ep: 16, zero: 1, global_batch: 64, micro_batch: 1, tokens_per_s_per_gpu: 1, )";
}

TEST_CASE("moe_dispatcher is read per run, reaches the knobs, and is refused outside Megatron-Core") {
  const std::string head = moe_run_head();
  for (const char* d : {"deepep", "hybridep"}) {
    auto ok = parse_validation(head + "moe_dispatcher: " + d + ", framework: megatron}\n", "t.yaml");
    INFO(d);
    REQUIRE(ok.ok());
    CHECK(to_string(run_framework(ok.value().runs[0]).moe_dispatcher) == std::string(d));
  }
  auto plain = parse_validation(head + "framework: megatron}\n", "t.yaml");
  REQUIRE(plain.ok());
  CHECK(run_framework(plain.value().runs[0]).moe_dispatcher == MoeDispatcher::AllToAll);
  auto other = parse_validation(head + "moe_dispatcher: deepep, framework: deepspeed}\n", "t.yaml");
  REQUIRE(!other.ok());
  CHECK(other.error().field == "runs[0].moe_dispatcher");
  auto unknown = parse_validation(head + "moe_dispatcher: nccl, framework: megatron}\n", "t.yaml");
  REQUIRE(!unknown.ok());
  CHECK(unknown.error().field == "runs[0].moe_dispatcher");
}

TEST_CASE("cuda_graphs and recompute_modules are read per run, reach the knobs, and are refused outside Megatron-Core") {
  const std::string head = moe_run_head();
  auto ok = parse_validation(head + "cuda_graphs: [attn, moe_router, moe_preprocess], recompute: selective, "
                                    "recompute_modules: [moe_act], framework: megatron}\n", "t.yaml");
  REQUIRE(ok.ok());
  const FrameworkKnobs k = run_framework(ok.value().runs[0]);
  CHECK(k.cuda_graphs == (kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess));
  CHECK(k.recompute_modules == kRecomputeMoeAct);
  CHECK(run_framework(parse_validation(head + "framework: nemo}\n", "t.yaml").value().runs[0]).cuda_graphs == 0);
  struct Bad {
    std::string keys, field;
  };
  for (const Bad& b : {Bad{"cuda_graphs: [attn], framework: fsdp", "runs[0].cuda_graphs"},
                       Bad{"cuda_graphs: [attn, layer], framework: megatron", "runs[0].cuda_graphs"},
                       Bad{"cuda_graphs: attn, framework: megatron", "runs[0].cuda_graphs"},
                       Bad{"cuda_graphs: [[attn]], framework: megatron", "runs[0].cuda_graphs[0]"},
                       Bad{"recompute_modules: [mlp], framework: megatron", "runs[0].recompute_modules"},
                       Bad{"recompute: selective, recompute_modules: [mlp, mlp], framework: megatron",
                           "runs[0].recompute_modules"}}) {
    auto r = parse_validation(head + b.keys + "}\n", "t.yaml");
    INFO(b.keys);
    REQUIRE(!r.ok());
    CHECK(r.error().field == b.field);
  }
}

TEST_CASE("validation optimizer-state keys reach the knobs and imply the precision-aware optimizer and shrink the state") {
  const std::string row = one_run_with("exp_avg_dtype: bf16, exp_avg_sq_dtype: bf16");
  auto ok = parse_validation(row + "megatron}\n", "t.yaml");
  REQUIRE(ok.ok());
  const FrameworkKnobs k = run_framework(ok.value().runs[0]);
  CHECK(k.optimizer_states.precision_aware);
  CHECK(k.optimizer_states.exp_avg == StateDtype::Bf16);
  CHECK(k.optimizer_states.main_params == StateDtype::Fp32);
  auto plain = parse_validation(one_run_with("recompute: none") + "megatron}\n", "t.yaml");
  REQUIRE(plain.ok());
  auto hw = load_hardware("h100-80gb-sxm", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  auto a = predict_run(plain.value(), plain.value().runs[0], hw.value());
  auto b = predict_run(ok.value(), ok.value().runs[0], hw.value());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  // ZeRO 1: 12 -> 6 bytes per parameter of optimizer state (bf16 weights keep the 16-bit remainder).
  CHECK(b.value().estimate.memory.optimizer_bytes == Approx(a.value().estimate.memory.optimizer_bytes / 2.0));
  auto bad = parse_validation(row + "fsdp}\n", "t.yaml");
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "runs[0].precision_aware_optimizer");
  auto bad_dtype = parse_validation(one_run_with("main_params_dtype: bf16") + "megatron}\n", "t.yaml");
  REQUIRE(!bad_dtype.ok());
  CHECK(bad_dtype.error().field == "runs[0].main_params_dtype");
}
