// FP8 fused attention: the profile's measured ratios (gpu.fp8_attention_speedup), their lookup by dtype,
// head dimension and window, the attention core's time under them, and the validation key.
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"
#include "core/validation_runs.h"
#include "costmodel/attention.h"
#include "costmodel/fp8_attention.h"
#include "costmodel/validate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
const std::string kProfiles = std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles";

HardwareProfile with_ratios() {
  HardwareProfile hw = meshplan_test::a100();
  hw.fp8_attention_speedups.push_back({"mxfp8", 128, 0, {2048, 8192}, {1.2, 1.4}, {0.8, 1.1}, "9.22.0"});
  hw.fp8_attention_speedups.push_back({"mxfp8", 64, 128, {2048, 4096}, {1.0, 1.0}, {0.4, 0.2}, "9.22.0"});
  return hw;
}
}  // namespace

TEST_CASE("fp8 attention format: the knob with a Transformer Engine recipe") {
  Job job;
  job.fp8 = Fp8Recipe::Mxfp8;
  CHECK(fp8_attention_dtype(job).empty());  // knob off
  job.knobs.fp8_attention = true;
  CHECK(fp8_attention_dtype(job) == "mxfp8");
  job.fp8 = Fp8Recipe::Current;
  CHECK(fp8_attention_dtype(job) == "fp8");
  job.fp8 = Fp8Recipe::Delayed;
  CHECK(fp8_attention_dtype(job) == "fp8");
  job.fp8 = Fp8Recipe::None;
  CHECK(fp8_attention_dtype(job).empty());
  job.fp8 = Fp8Recipe::Rowwise;  // torchao's: no TE attention
  CHECK(fp8_attention_dtype(job).empty());
}

TEST_CASE("fp8 attention ratios: exact dtype, head dim and window, log-interpolated and held at the ends") {
  const HardwareProfile hw = with_ratios();
  Fp8AttentionRatio r = fp8_attention_ratio(hw, "mxfp8", 128, 0, 4096.0);  // halfway in log between 2k and 8k
  CHECK(r.forward == Approx(1.3));
  CHECK(r.backward == Approx(0.95));
  CHECK(fp8_attention_ratio(hw, "mxfp8", 128, 0, 1024.0).forward == Approx(1.2));   // held below
  CHECK(fp8_attention_ratio(hw, "mxfp8", 128, 0, 65536.0).backward == Approx(1.1));  // held above
  CHECK(fp8_attention_ratio(hw, "mxfp8", 64, 128, 4096.0).backward == Approx(0.2));
  // No entry: 1, 1 (costed as 16-bit): another dtype, head dim or window, or no FP8 attention at all.
  for (Fp8AttentionRatio none : {fp8_attention_ratio(hw, "fp8", 128, 0, 4096.0),
                                 fp8_attention_ratio(hw, "mxfp8", 96, 0, 4096.0),
                                 fp8_attention_ratio(hw, "mxfp8", 64, 0, 4096.0),
                                 fp8_attention_ratio(hw, "mxfp8", 64, 256, 4096.0),
                                 fp8_attention_ratio(hw, "", 128, 0, 4096.0)}) {
    CHECK(none.forward == 1.0);
    CHECK(none.backward == 1.0);
  }
}

TEST_CASE("fp8 attention divides the fused kernel's forward and backward time by the measured ratio") {
  const HardwareProfile hw = with_ratios();
  ModelSpec m = meshplan_test::llama3_8b();  // head dim 128
  const double peak = hw.peak_flops.at("bf16");
  const AttentionCoreTime bf16 = attention_core_time(hw, peak, m, AttentionKind::Fused, 2, 4096, 1, 2.0,
                                                     FusedAttentionKernel::Cudnn);
  const AttentionCoreTime fp8 = attention_core_time(hw, peak, m, AttentionKind::Fused, 2, 4096, 1, 2.0,
                                                    FusedAttentionKernel::Cudnn, true, "mxfp8");
  CHECK(fp8.forward_s == Approx(bf16.forward_s / 1.3));
  CHECK(fp8.backward_s == Approx(bf16.backward_s / 0.95));
  const AttentionCoreTime other = attention_core_time(hw, peak, m, AttentionKind::Fused, 2, 4096, 1, 2.0,
                                                      FusedAttentionKernel::Cudnn, true, "fp8");
  CHECK(other.forward_s == bf16.forward_s);  // no fp8 entry: as 16-bit
}

TEST_CASE("a windowed layer takes its window's ratio, the full layers theirs (GPT-OSS-like)") {
  const HardwareProfile hw = with_ratios();
  ModelSpec m = meshplan_test::gpt(4096, 2, 64);  // head dim 64
  m.sliding_window = 128;
  m.sliding_window_layers = 1;  // one of the two layers windowed
  const double peak = hw.peak_flops.at("bf16");
  const AttentionCoreTime bf16 = attention_core_time(hw, peak, m, AttentionKind::Fused, 2, 4096, 1, 2.0,
                                                     FusedAttentionKernel::Cudnn);
  const AttentionCoreTime fp8 = attention_core_time(hw, peak, m, AttentionKind::Fused, 2, 4096, 1, 2.0,
                                                    FusedAttentionKernel::Cudnn, true, "mxfp8");
  ModelSpec full = m;
  full.sliding_window = 0;
  full.sliding_window_layers = 0;
  ModelSpec win = m;
  win.sliding_window_layers = 2;
  const AttentionCoreTime full_t = attention_core_time(hw, peak, full, AttentionKind::Fused, 2, 4096, 1, 2.0,
                                                       FusedAttentionKernel::Cudnn);
  const AttentionCoreTime win_t = attention_core_time(hw, peak, win, AttentionKind::Fused, 2, 4096, 1, 2.0,
                                                      FusedAttentionKernel::Cudnn);
  // The full layer has no head-dim-64 full-causal entry (16-bit); the windowed one's backward is 5x slower.
  CHECK(fp8.backward_s == Approx(0.5 * full_t.backward_s + 0.5 * win_t.backward_s / 0.2));
  CHECK(fp8.backward_s > bf16.backward_s);
}

TEST_CASE("fp8_attention_speedup loads from profiles, round-trips, and bad entries name the field") {
  auto gb200 = load_hardware("gb200-nvl72", kProfiles);
  REQUIRE(gb200.ok());
  const HardwareProfile& hw = gb200.value();
  // cudnn-frontend's GB200 benchmark: GPT-OSS's windowed MXFP8 backward at 4k is 4.5x the bf16 one.
  CHECK(fp8_attention_ratio(hw, "mxfp8", 64, 128, 4096.0).backward == Approx(0.224));
  CHECK(fp8_attention_ratio(hw, "mxfp8", 192, 0, 4096.0).forward == Approx(1.368));
  auto again = parse_hardware(hardware_to_yaml(hw), "again.yaml");
  REQUIRE(again.ok());
  CHECK(again.value().fp8_attention_speedups.size() == hw.fp8_attention_speedups.size());
  CHECK(again.value().fp8_attention_speedups[0].version == "9.22.0");

  auto a100 = load_hardware("a100-80gb-sxm", kProfiles);  // no FP8 attention entries of its own
  REQUIRE(a100.ok());
  const std::string base = hardware_to_yaml(a100.value());
  REQUIRE(base.find("\nnode:") != std::string::npos);
  auto bad = [&](const std::string& entry) {
    std::string text = base;
    text.insert(text.find("\nnode:") + 1, "  fp8_attention_speedup:\n    - " + entry + "\n");
    auto r = parse_hardware(text, "bad.yaml");
    REQUIRE_FALSE(r.ok());
    return r.error();
  };
  CHECK(bad("{dtype: fp8, seq: [4096], forward: [1.1], backward: [0.9]}\n    - "
            "{dtype: fp8, seq: [2048], forward: [1], backward: [1]}").field == "gpu.fp8_attention_speedup[1]");
  CHECK(bad("{dtype: fp4, seq: [4096], forward: [1], backward: [1]}").field == "gpu.fp8_attention_speedup[0].dtype");
  CHECK(bad("{dtype: fp8, seq: [4096, 2048], forward: [1, 1], backward: [1, 1]}").field ==
        "gpu.fp8_attention_speedup[0].seq[1]");
  CHECK(bad("{dtype: fp8, seq: [4096], forward: [1, 2], backward: [1]}").field == "gpu.fp8_attention_speedup[0].forward");
  CHECK(bad("{dtype: fp8, seq: [4096], forward: [1], backward: [-1]}").field ==
        "gpu.fp8_attention_speedup[0].backward[0]");
  CHECK(bad("{dtype: fp8, window: -1, seq: [4096], forward: [1], backward: [1]}").field ==
        "gpu.fp8_attention_speedup[0].window");
  CHECK(bad("{dtype: fp8, version: 9.x, seq: [4096], forward: [1], backward: [1]}").field ==
        "gpu.fp8_attention_speedup[0].version");
}

TEST_CASE("validation files: fp8_attention needs an FP8 run and reaches the job") {
  const std::string head =
      "hardware: gb200-nvl72\nframework: megatron\nmodels:\n"
      "  m: {n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 256}\nruns:\n";
  const std::string run = "  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1";
  auto ok = parse_validation(head + run + ", fp8: true, fp8_recipe: mxfp8, fp8_attention: true}\n", "t.yaml");
  REQUIRE(ok.ok());
  CHECK(ok.value().runs[0].fp8_attention);
  CHECK(run_framework(ok.value().runs[0]).fp8_attention);
  auto bad = parse_validation(head + run + ", fp8_attention: true}\n", "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].fp8_attention");
}

TEST_CASE("Hopper profiles carry cuDNN 9.19's FP8 attention on H200: forward faster, backward slower past 4k") {
  for (const char* name : {"h200-141gb-sxm", "h100-80gb-sxm"}) {
    INFO(name);
    auto hw = load_hardware(name, kProfiles);
    REQUIRE(hw.ok());
    const Fp8AttentionRatio r = fp8_attention_ratio(hw.value(), "fp8", 128, 0, 16384.0);
    CHECK(r.forward == Approx(1.499));
    CHECK(r.backward == Approx(0.646));
    CHECK(fp8_attention_ratio(hw.value(), "mxfp8", 128, 0, 16384.0).forward == 1.0);  // no MXFP8 on Hopper
  }
}
