// The GPU's sustained clock (HardwareProfile::sustained_clock_fraction): GEMMs run at the burst curve
// times the fraction; published fused-attention speeds keep theirs; a whole step follows.
#include <catch2/catch.hpp>

#include <algorithm>

#include "costmodel/attention.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
AttentionKernelSpeed flash2_curve() {
  AttentionKernelSpeed c;
  c.kernel = "flash2";
  c.head_dim = 128;
  c.seq = {1024, 4096};
  c.flops_per_s = {100e12, 200e12};
  return c;
}
}  // namespace

TEST_CASE("sustained clock: a GEMM takes burst time / fraction, the burst curve itself is unchanged") {
  HardwareProfile hw = meshplan_test::a100();
  const double flops = 3e10, peak = 312e12;
  const double burst = gemm_time_s(hw, peak, flops);
  CHECK(burst_gemm_efficiency(hw, flops) == gemm_efficiency(hw, flops));
  hw.sustained_clock_fraction = 0.888;
  CHECK(gemm_time_s(hw, peak, flops) == Approx(burst / 0.888).epsilon(1e-12));
  CHECK(gemm_efficiency(hw, flops) == Approx(0.888 * burst_gemm_efficiency(hw, flops)).epsilon(1e-12));
  CHECK(gemm_time_s(hw, peak, 0.0) == 0.0);
}

TEST_CASE("sustained clock: materialized attention's GEMMs slow down, a published fused curve does not") {
  const ModelSpec m = meshplan_test::llama3_8b();
  HardwareProfile hw = meshplan_test::a100();
  hw.attention_kernel_speeds = {flash2_curve()};
  HardwareProfile slow = hw;
  slow.sustained_clock_fraction = 0.5;
  const double peak = 312e12, b = 1, s = 4096;
  const AttentionCoreTime fused = attention_core_time(hw, peak, m, AttentionKind::Fused, b, s, 1, 2.0);
  const AttentionCoreTime fused_slow = attention_core_time(slow, peak, m, AttentionKind::Fused, b, s, 1, 2.0);
  CHECK(fused_slow.forward_s == fused.forward_s);  // the published kernel speed is kept (README "Sustained clocks")
  CHECK(fused_slow.backward_s == fused.backward_s);
  const AttentionCoreTime mat = attention_core_time(hw, peak, m, AttentionKind::Materialized, b, s, 1, 2.0);
  const AttentionCoreTime mat_slow = attention_core_time(slow, peak, m, AttentionKind::Materialized, b, s, 1, 2.0);
  // 2 GEMMs of 2 b s^2 h at half the clock, each at least its scores' traffic (2 b a s^2 bytes, which the clock
  // does not change), the softmax bytes as before.
  const double gemm = 2.0 * b * s * s * 4096;
  const double io = 2.0 * b * 32 * s * s / (hw.hbm_bytes_per_s * hw.hbm_efficiency);
  const double one = std::max(gemm_time_s(hw, peak, gemm), io), one_slow = std::max(gemm_time_s(slow, peak, gemm), io);
  CHECK(one_slow > one);
  CHECK(mat_slow.forward_s - mat.forward_s == Approx(2.0 * (one_slow - one)).epsilon(1e-9));
  // Without a curve the fused kernel is costed relative to the GEMM curve, so it follows the clock.
  HardwareProfile bare = meshplan_test::a100(), bare_slow = bare;
  bare_slow.sustained_clock_fraction = 0.5;
  CHECK(attention_core_time(bare_slow, peak, m, AttentionKind::Fused, b, s, 1, 2.0).forward_s ==
        Approx(2.0 * attention_core_time(bare, peak, m, AttentionKind::Fused, b, s, 1, 2.0).forward_s));
}

TEST_CASE("sustained clock: a GEMM-bound step slows by at most 1 / fraction, and does slow") {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 8, 8, 4096);
  ParallelConfig c;
  c.dp = 8;
  c.zero_stage = 1;
  c.micro_batch_size = 1;
  c.num_micro_batches = 1;
  const double base = estimate_step(p, c).time.compute_s;
  p.hardware.sustained_clock_fraction = 0.8;
  const double slow = estimate_step(p, c).time.compute_s;
  CHECK(slow > 1.15 * base);          // GEMMs are most of a Llama-3-8B layer at seq 4096
  CHECK(slow <= base / 0.8 * (1 + 1e-12));  // element-wise kernels are HBM bound: not slowed
}
