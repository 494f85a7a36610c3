// Published fused-attention speed curves (costmodel/attention_speed.h): interpolation, kernel and head-dim
// choice, the forward share, the attention core time they give, and the shipped A100/H100 curves.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/io.h"
#include "costmodel/attention.h"
#include "costmodel/attention_speed.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
const std::string kProfiles = std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles";

AttentionKernelSpeed curve(const char* kernel, int64_t head_dim, std::vector<double> seq, std::vector<double> tflops) {
  AttentionKernelSpeed c;
  c.kernel = kernel;
  c.head_dim = head_dim;
  c.seq = std::move(seq);
  for (double t : tflops) c.flops_per_s.push_back(t * 1e12);
  return c;
}

HardwareProfile with_curves() {
  HardwareProfile hw = meshplan_test::a100();
  hw.attention_kernel_speeds = {curve("flash2", 128, {1024, 4096}, {100, 200}),
                                curve("flash1", 128, {1024, 4096}, {50, 80}),
                                curve("flash2", 64, {1024, 4096}, {90, 150})};
  return hw;
}
}  // namespace

TEST_CASE("attention speed: points, log-linear between them, flat beyond the ends") {
  const AttentionKernelSpeed c = curve("flash2", 128, {1024, 4096, 16384}, {100, 200, 260});
  CHECK(curve_flops_per_s(c, 1024) == Approx(100e12));
  CHECK(curve_flops_per_s(c, 4096) == Approx(200e12));
  CHECK(curve_flops_per_s(c, 2048) == Approx(150e12));  // half-way in log(seq)
  CHECK(curve_flops_per_s(c, 8192) == Approx(230e12));
  CHECK(curve_flops_per_s(c, 512) == Approx(100e12));
  CHECK(curve_flops_per_s(c, 131072) == Approx(260e12));
}

TEST_CASE("attention speed: the kernel's curve at the nearest head dim, Triton falls back to FlashAttention-1") {
  HardwareProfile hw = with_curves();
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::FlashAttention2, 128)->head_dim == 128);
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::FlashAttention2, 64)->head_dim == 64);
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::FlashAttention2, 80)->head_dim == 64);
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::FlashAttention2, 256)->head_dim == 128);
  const AttentionKernelSpeed* t = attention_speed_curve(hw, FusedAttentionKernel::Triton, 128);
  REQUIRE(t != nullptr);
  CHECK(t->kernel == "flash1");
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::TritonOps, 128)->kernel == "flash1");  // no curve of its own
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::Cudnn, 128) == nullptr);
  // OpenAI Triton's kernel has a curve of its own; flash-attn's Triton kernel never reads one (a profile
  // cannot hold a "triton" curve: core/io_attention_speed.cpp refuses it).
  hw.attention_kernel_speeds.push_back(curve("triton-ops", 128, {1024, 4096}, {45, 70}));
  hw.attention_kernel_speeds.push_back(curve("triton", 128, {1024, 4096}, {1, 2}));
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::TritonOps, 128)->kernel == "triton-ops");
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::Triton, 128)->kernel == "flash1");
  CHECK(attention_speed_curve(meshplan_test::a100(), FusedAttentionKernel::FlashAttention2, 128) == nullptr);
}

TEST_CASE("attention speed: flash-attn's Triton kernel keeps FA1's head-dim-64 curve above head dim 64") {
  HardwareProfile hw = with_curves();
  hw.attention_kernel_speeds.push_back(curve("flash1", 64, {1024, 4096}, {60, 95}));
  hw.attention_kernel_speeds.push_back(curve("flash1", 32, {1024, 4096}, {40, 60}));
  // Its 128 x 128 tiles do not shrink with the head dimension: FA1's own head-dim-128 curve (50-80) is
  // slower per FLOP than its head-dim-64 one (60-95), the Triton kernel is not.
  for (double d : {64.0, 80.0, 128.0, 256.0}) {
    const AttentionKernelSpeed* t = attention_speed_curve(hw, FusedAttentionKernel::Triton, d);
    REQUIRE(t != nullptr);
    CHECK(t->kernel == "flash1");
    CHECK(t->head_dim == 64);
  }
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::Triton, 32)->head_dim == 32);  // below 64: nearest
  // FA1 itself and the other kernels keep the nearest head dimension.
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::FlashAttention1, 128)->head_dim == 128);
  CHECK(attention_speed_curve(hw, FusedAttentionKernel::TritonOps, 128)->head_dim == 128);
}

TEST_CASE("attention speed: forward share from the kernel's forward/backward efficiencies, else 1/3.5") {
  HardwareProfile hw = with_curves();
  CHECK(forward_time_share(hw, FusedAttentionKernel::FlashAttention2) == Approx(1.0 / 3.5));
  hw.fused_attention_forward_efficiency = 0.4;
  hw.fused_attention_backward_efficiency = 0.25;
  // (1/0.4) / (1/0.4 + 2.5/0.25) = 2.5 / 12.5
  CHECK(forward_time_share(hw, FusedAttentionKernel::FlashAttention2) == Approx(0.2));
  CHECK(forward_time_share(hw, FusedAttentionKernel::Triton) == Approx(1.0 / 3.5));
}

TEST_CASE("attention speed: the core time is 3.5 x the causal half of 4 b s^2 h / t over the curve") {
  HardwareProfile hw = with_curves();
  hw.fused_attention_forward_efficiency = 0.4;
  hw.fused_attention_backward_efficiency = 0.25;
  const ModelSpec m = meshplan_test::llama3_8b();  // h 4096, 32 heads of 128
  const double b = 2, s = 2048, h = 4096;
  const int tp = 2;
  const double total = 3.5 * (2.0 * b * s * s * h / tp) / 150e12;  // flash2 at 2048: 150 TFLOP/s
  const AttentionCoreTime f2 =
      attention_core_time(hw, 312e12, m, AttentionKind::Fused, b, s, tp, 2.0, FusedAttentionKernel::FlashAttention2);
  CHECK(f2.forward_s == Approx(0.2 * total));
  CHECK(f2.backward_s == Approx(0.8 * total));
  // Triton takes FlashAttention-1's curve (65 TFLOP/s at 2048, half-way in log(seq) between 50 and 80)
  // and splits its time 1 : 2.5.
  const double t1 = 3.5 * (2.0 * b * s * s * h / tp) / 65e12;
  const AttentionCoreTime tr =
      attention_core_time(hw, 312e12, m, AttentionKind::Fused, b, s, tp, 2.0, FusedAttentionKernel::Triton);
  CHECK(tr.forward_s == Approx(t1 / 3.5));
  CHECK(tr.backward_s == Approx(2.5 * t1 / 3.5));
}

TEST_CASE("shipped profiles: llm-foundry's Triton kernel costs 155/77 x FlashAttention-2 at 2k on A100") {
  auto hw = load_hardware("a100-80gb-sxm", kProfiles);
  REQUIRE(hw.ok());
  const ModelSpec m = meshplan_test::llama3_8b();
  auto core = [&](FusedAttentionKernel k) {
    const AttentionCoreTime t = attention_core_time(hw.value(), 312e12, m, AttentionKind::Fused, 4, 2048, 1, 2.0, k);
    return t.forward_s + t.backward_s;
  };
  // Dao 2023 Fig. 4(d), causal, head dim 128, seq 2k: FlashAttention-2 155, OpenAI Triton 68 TFLOP/s;
  // flash-attn's Triton kernel takes FlashAttention-1's head-dim-64 figure, Fig. 4(c): 77 (FA1 at 128: 69).
  CHECK(core(FusedAttentionKernel::Triton) / core(FusedAttentionKernel::FlashAttention2) == Approx(155.0 / 77.0));
  CHECK(core(FusedAttentionKernel::FlashAttention1) / core(FusedAttentionKernel::FlashAttention2) ==
        Approx(155.0 / 69.0));
  CHECK(core(FusedAttentionKernel::TritonOps) / core(FusedAttentionKernel::FlashAttention2) == Approx(155.0 / 68.0));
  CHECK(core(FusedAttentionKernel::FlashAttention2) == Approx(3.5 * 2.0 * 4 * 2048.0 * 2048.0 * 4096 / 155e12));
  auto h100 = load_hardware("h100-80gb-sxm", kProfiles);
  REQUIRE(h100.ok());
  const AttentionKernelSpeed* tr = attention_speed_curve(h100.value(), FusedAttentionKernel::Triton, 128);
  REQUIRE(tr != nullptr);
  CHECK(tr->kernel == "flash1");  // no published Hopper figure for the Triton kernel
  CHECK(tr->head_dim == 64);      // Dao 2023 Fig. 7(c): FA1 head dim 64, 156 TFLOP/s at 16k (128: 137)
  CHECK(curve_flops_per_s(*tr, 16384) == Approx(156e12));
}

TEST_CASE("shipped profiles: Megatron's cuDNN attention on B200 and GB200 takes NVIDIA's published curve") {
  const ModelSpec m = meshplan_test::llama3_8b();
  // NVIDIA/cudnn-frontend sdpa_bf16_benchmark_results_NVIDIA_B200.csv, causal, head dim 128, seq 8192:
  // cuDNN 9.13.1 forward 1171.3, backward 942.5 TFLOP/s. GB200 takes the same cuDNN release's curve times
  // its GEMM burst rate over B200's (MAMF 1822 / 1737): NVIDIA's GB200 table is cuDNN 9.17.0, released after
  // the containers of the runs it would predict (gb200-nvl72.yaml says why).
  struct Case {
    const char* profile;
    double scale;
  };
  for (const Case& c : {Case{"b200", 1.0}, Case{"gb200-nvl72", 1822.0 / 1737.0}}) {
    auto hw = load_hardware(c.profile, kProfiles);
    REQUIRE(hw.ok());
    const AttentionKernelSpeed* cu = attention_speed_curve(hw.value(), FusedAttentionKernel::Cudnn, 128);
    REQUIRE(cu != nullptr);
    CHECK(cu->kernel == "cudnn");
    // fwd + bwd on the benchmark's FLOP count
    const double combined = c.scale * 3.5 / (1.0 / 1171.3 + 2.5 / 942.5);
    CHECK(curve_flops_per_s(*cu, 8192) == Approx(combined * 1e12).epsilon(0.002));
    const AttentionCoreTime t =
        attention_core_time(hw.value(), 2250e12, m, AttentionKind::Fused, 1, 8192, 1, 2.0, FusedAttentionKernel::Cudnn);
    const double half_flops = 2.0 * 8192.0 * 8192.0 * 4096;  // causal half of 4 b s^2 h
    CHECK(t.forward_s + t.backward_s == Approx(3.5 * half_flops / (combined * 1e12)).epsilon(0.002));
  }
}

TEST_CASE("shipped profiles: cuDNN attention on H100 takes FlashAttention-3's figures by length and head dim") {
  // Shah et al. 2024 Fig. 5/6 (H100 SXM5, BF16): forward causal F, forward unmasked Fn, backward unmasked
  // Bn; the causal backward is Bn x F / Fn. Head dim 64 at 2k: F 334, Fn 395, Bn 395; head dim 128 at
  // 4k: F 518, Fn 609, Bn 499. Forward + backward as the curves count: 3.5 / (1 / F + 2.5 / B).
  auto combined = [](double f, double fn, double bn) { return 3.5 / (1.0 / f + 2.5 / (bn * f / fn)); };
  struct Case {
    const char* profile;
    double scale;
  };
  for (const Case& c : {Case{"h100-80gb-sxm", 1.0}, Case{"h800-80gb-sxm", 1.0}, Case{"h100-96gb-hbm2e-500w", 912.0 / 989.0}}) {
    INFO(c.profile);
    auto hw = load_hardware(c.profile, kProfiles);
    REQUIRE(hw.ok());
    const AttentionKernelSpeed* hd64 = attention_speed_curve(hw.value(), FusedAttentionKernel::Cudnn, 64);
    const AttentionKernelSpeed* hd128 = attention_speed_curve(hw.value(), FusedAttentionKernel::Cudnn, 128);
    REQUIRE(hd64 != nullptr);
    REQUIRE(hd128 != nullptr);
    CHECK(hd64->head_dim == 64);
    CHECK(hd128->head_dim == 128);
    CHECK(curve_flops_per_s(*hd64, 2048) == Approx(c.scale * combined(334, 395, 395) * 1e12).epsilon(0.002));
    CHECK(curve_flops_per_s(*hd128, 4096) == Approx(c.scale * combined(518, 609, 499) * 1e12).epsilon(0.002));
    // The single 4k unmasked point that priced every length before (0.616 / 0.505 of 989) is faster
    // than the causal curve everywhere; at head dim 64 and 2k by 1.6x.
    const double old_rate = 3.5 / (1.0 / (0.616 * 989) + 2.5 / (0.505 * 989)) * 1e12;
    CHECK(old_rate / curve_flops_per_s(*hd64, 2048) > 1.5 / c.scale);
  }
}
