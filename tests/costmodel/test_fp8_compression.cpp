// FP8 recipes (linear GEMMs at the fp8 peak, weight copies, scaling state) and compressed DP
// gradient reduction (PowerSGD, 1-bit Adam/LAMB, top-k) vs hand-computed closed forms.
#include <catch2/catch.hpp>

#include "core/job_features.h"
#include "costmodel/compute_time.h"
#include "costmodel/fp8.h"
#include "costmodel/grad_compression.h"
#include "costmodel/memory.h"
#include "costmodel/moe_cost.h"
#include "costmodel/step.h"
#include "fixtures.h"

using namespace meshplan;
using namespace meshplan_test;

namespace {
Problem fp8_problem() {
  Problem p = problem(llama3_8b(), 8, 64, 4096);
  p.hardware.peak_flops["fp8"] = 624e12;
  p.job.knobs.attention = AttentionKind::Fused;
  return p;
}
ParallelConfig dp8() {
  ParallelConfig c;
  c.dp = 8;
  c.micro_batch_size = 1;
  c.num_micro_batches = 8;
  return c;
}
}  // namespace

TEST_CASE("fp8: linear GEMMs use the fp8 peak and attention and LM head stay at bf16") {
  Problem p = fp8_problem();
  // A flat curve: an FP8 GEMM is read at the size of equal duration (test_fp8_gemm_duration.cpp), which
  // a flat curve maps to the same efficiency.
  p.hardware.gemm_efficiency = {{1e9, 0.8}};
  const LayerCompute bf = layer_compute(p, dp8());
  const EndsCompute ends_bf = ends_compute(p, dp8());
  p.job.fp8 = Fp8Recipe::Delayed;
  const LayerCompute f8 = layer_compute(p, dp8());
  CHECK(linear_gemm_peak(p, 312e12) == 624e12);
  // dW GEMMs are pure linear-layer GEMMs: twice the peak at the same efficiency halves them exactly.
  CHECK(f8.backward_weight_s == Approx(bf.backward_weight_s / 2.0));
  CHECK(f8.forward_s < bf.forward_s);
  CHECK(ends_compute(p, dp8()).head_forward_s == Approx(ends_bf.head_forward_s));
}

TEST_CASE("fp8: split-accumulation GEMMs run at the FP8 peak times the profile's FP8/BF16 efficiency ratio") {
  Problem p = fp8_problem();
  p.hardware.gemm_efficiency = {{1e9, 0.8}};  // flat: the rate alone sets the time (see the case above)
  p.hardware.fp8_gemm_relative_efficiency = 0.8;
  p.job.fp8 = Fp8Recipe::Current;  // fprop fast accumulation, dgrad/wgrad split (TE Float8CurrentScaling)
  CHECK(linear_gemm_peak(p, 312e12) == 624e12);
  CHECK(linear_gemm_backward_peak(p, 312e12) == Approx(0.8 * 624e12));
  const LayerCompute cur = layer_compute(p, dp8());
  p.hardware.fp8_gemm_relative_efficiency = 1.0;
  const LayerCompute unit = layer_compute(p, dp8());
  // Only the backward's GEMMs slow down, each by exactly 1/0.8 (same FLOPs, flat curve).
  CHECK(cur.backward_weight_s == Approx(unit.backward_weight_s / 0.8));
  CHECK(cur.dx_gemm_s == Approx(unit.dx_gemm_s / 0.8));
  CHECK(cur.forward_s == Approx(unit.forward_s));
  // Blockwise and MXFP8 accumulate in split precision in the forward too.
  p.hardware.fp8_gemm_relative_efficiency = 0.8;
  for (Fp8Recipe r : {Fp8Recipe::Blockwise, Fp8Recipe::Mxfp8}) {
    p.job.fp8 = r;
    CHECK(linear_gemm_peak(p, 312e12) == Approx(0.8 * 624e12));
    CHECK(linear_gemm_backward_peak(p, 312e12) == Approx(0.8 * 624e12));
  }
  // No recipe and torchao row-wise: the 16-bit peak, whatever the ratio.
  for (Fp8Recipe r : {Fp8Recipe::None, Fp8Recipe::Rowwise}) {
    p.job.fp8 = r;
    CHECK(linear_gemm_peak(p, 312e12) == 312e12);
    CHECK(linear_gemm_backward_peak(p, 312e12) == 312e12);
  }
}

TEST_CASE("fp8: Blackwell (compute capability 10.x) keeps no FP8 transposes, Hopper and unknown GPUs do") {
  Problem p = fp8_problem();
  p.job.fp8 = Fp8Recipe::Current;
  for (double cc : {0.0, 8.9, 9.0, 12.0}) {
    p.hardware.compute_capability = cc;
    INFO(cc);
    CHECK(fp8_gemm_needs_transposes(p.hardware));
  }
  for (double cc : {10.0, 10.3, 11.0, 13.0}) {
    p.hardware.compute_capability = cc;
    INFO(cc);
    CHECK(!fp8_gemm_needs_transposes(p.hardware));
  }
  CHECK(fp8_weight_bytes_per_param(Fp8Recipe::Current, true) == 2.0);
  CHECK(fp8_weight_bytes_per_param(Fp8Recipe::Current, false) == 1.0);
  CHECK(fp8_weight_bytes_per_param(Fp8Recipe::Delayed, false) == 1.0);
  CHECK(fp8_weight_bytes_per_param(Fp8Recipe::Mxfp8, false) == Approx(2 + 2.0 / 32));  // row- and column-wise anyway
  // The backward's transposes of the saved inputs and output gradients go: exactly 2*(inputs+outputs).
  p.hardware.compute_capability = 9.0;
  const Fp8Overhead hopper = fp8_cast_bytes(p, dp8(), 4096);
  p.hardware.compute_capability = 10.0;
  const Fp8Overhead blackwell = fp8_cast_bytes(p, dp8(), 4096);
  CHECK(blackwell.forward_bytes == hopper.forward_bytes);
  const double h = 4096, kv = 1024, f = 14336, T = 4096;
  const double inputs = T * (h + h) + T * (h + f), outputs = T * ((h + 2 * kv) + h) + T * (2 * f + h);
  CHECK(hopper.backward_bytes - blackwell.backward_bytes == Approx(2.0 * (inputs + outputs)));
  // Weight copies: half on Blackwell.
  p.hardware.compute_capability = 9.0;
  const double hopper_w = estimate_memory(p, dp8()).weights_bytes;
  p.hardware.compute_capability = 10.0;
  const double blackwell_w = estimate_memory(p, dp8()).weights_bytes;
  CHECK(blackwell_w < hopper_w);
}

TEST_CASE("fp8: Transformer Engine stashes the FP8 GEMM inputs, torchao the 16-bit ones (exact bytes)") {
  Problem p = fp8_problem();  // Llama 3 8B, b 1, s 4096, tp 1: T = 4096, h = 4096, f = 14336, e = 2
  const double T = 4096, h = 4096, f = 14336;
  p.job.fp8 = Fp8Recipe::None;
  const double bf16 = layer_activation_bytes_for(p, dp8());
  p.job.fp8 = Fp8Recipe::Current;  // q = 1: QKV and fc1 inputs -1 byte, out-proj +1 (its FP8 copy), fc2 input -1
  CHECK(fp8_stash_delta_bytes(p, dp8(), Recompute::None) == Approx(-T * (h + f)));
  CHECK(layer_activation_bytes_for(p, dp8()) == Approx(bf16 - T * (h + f)));
  p.job.fp8 = Fp8Recipe::Mxfp8;  // q = 1 + 1/32 (one E8M0 scale per 32 elements)
  const double q = 1.0 + 1.0 / 32.0;
  CHECK(fp8_stash_delta_bytes(p, dp8(), Recompute::Selective) == Approx(T * ((q - 2) * (2 * h + f) + q * h)));
  CHECK(fp8_stash_delta_bytes(p, dp8(), Recompute::Full) == 0.0);  // only the layer input is kept
  p.job.fp8 = Fp8Recipe::Rowwise;
  CHECK(fp8_stash_delta_bytes(p, dp8(), Recompute::None) == 0.0);
  p.job.fp8 = Fp8Recipe::Current;
  p.job.knobs.fp8_saves_quantized_inputs = false;  // torchao (torchtitan): input_hp saved
  CHECK(fp8_stash_delta_bytes(p, dp8(), Recompute::None) == 0.0);
  CHECK(layer_activation_bytes_for(p, dp8()) == Approx(bf16));
  // The fast path (estimate_memory) and the reference (stage_memory) agree with it.
  p.job.knobs.fp8_saves_quantized_inputs = true;
  CHECK(estimate_memory(p, dp8()).activations_bytes == Approx(stage_memory(p, dp8(), 0).activations_bytes));
}

TEST_CASE("fp8: cast bytes per recipe and closed form") {
  Problem p = fp8_problem();
  p.job.fp8 = Fp8Recipe::Delayed;
  const double T = 4096, h = 4096, f = 14336, kv = 1024;
  const double inputs = T * (h + h + f + h), outputs = T * ((h + 2 * kv) + h + 2 * f + h);
  Fp8Overhead d = fp8_cast_bytes(p, dp8(), T);
  CHECK(d.forward_bytes == Approx(3 * inputs));
  CHECK(d.backward_bytes == Approx(3 * outputs + 2 * (inputs + outputs)));
  p.job.fp8 = Fp8Recipe::Current;
  CHECK(fp8_cast_bytes(p, dp8(), T).forward_bytes == Approx(5 * inputs));
  p.job.fp8 = Fp8Recipe::Mxfp8;
  CHECK(fp8_cast_bytes(p, dp8(), T).backward_bytes == Approx(4 * outputs + 2 * inputs));
  p.job.fp8 = Fp8Recipe::None;
  CHECK(fp8_cast_bytes(p, dp8(), T).forward_bytes == 0.0);
}

TEST_CASE("fp8: weight copies and amax history in memory and closed form") {
  Problem p = fp8_problem();
  const MemoryBreakdown bf = estimate_memory(p, dp8());
  p.job.fp8 = Fp8Recipe::Delayed;
  const MemoryBreakdown f8 = estimate_memory(p, dp8());
  const double linear = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3 * 4096.0 * 14336;
  const double state = 20 * 4 * (1024 + 2);
  CHECK(f8.weights_bytes - bf.weights_bytes == Approx(32 * (2 * linear + state)));
  CHECK(f8.weights_bytes == Approx(stage_memory(p, dp8(), 0).weights_bytes));  // fast path = reference
  CHECK(fp8_weight_bytes_per_param(Fp8Recipe::Mxfp8) == Approx(2 + 2.0 / 32));
  CHECK(fp8_scaling_state_bytes_per_layer(Fp8Recipe::Current) == Approx(20 * 4 * 3));
}

TEST_CASE("fp8: under ZeRO-3 only the two gathered layers hold FP8 copies, every layer its scaling state") {
  Problem p = fp8_problem();
  ParallelConfig c = dp8();
  c.zero_stage = 3;
  const MemoryBreakdown bf = estimate_memory(p, c);
  p.job.fp8 = Fp8Recipe::Current;
  const MemoryBreakdown f8 = estimate_memory(p, c);
  const double linear = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3 * 4096.0 * 14336;
  const double state = 20 * 4 * 3;  // current scaling: amax, scale, scale_inv per FP8 tensor
  // Llama 3 8B, 32 layers: 2 layers' copies (current + prefetched), not 32, whatever the DP size.
  CHECK(f8.weights_bytes - bf.weights_bytes == Approx(2 * 2 * linear + 32 * state));
  CHECK(f8.weights_bytes == Approx(stage_memory(p, c, 0).weights_bytes));  // fast path = reference
  c.zero_stage = 2;  // ZeRO 0-2 keep every layer's copy
  Problem bf16 = p;
  bf16.job.fp8 = Fp8Recipe::None;
  CHECK(estimate_memory(p, c).weights_bytes - estimate_memory(bf16, c).weights_bytes ==
        Approx(32 * (2 * linear + state)));
}

TEST_CASE("grad compression: bytes sent and warm-up per method and closed forms") {
  Problem p = fp8_problem();
  const ParallelConfig c = dp8();
  const GroupPlacement g = place_group(p.hardware, 8, 1);
  const double N = stage_parameters_per_gpu(p.model, c, 0);
  p.job.compression = GradCompression::OneBitAdam;
  const CompressedReduction one = compressed_reduction(p, c, 0, g);
  CHECK(one.bytes_sent == Approx(2.0 * 7.0 / 8.0 * N / 8.0));
  CHECK(one.warmup_steps == 100000);
  p.job.compression = GradCompression::TopK;
  p.job.topk_fraction = 0.01;
  const CompressedReduction tk = compressed_reduction(p, c, 0, g);
  CHECK(tk.bytes_sent == Approx(7.0 * 0.01 * N * (2.0 + 4.0)));
  CHECK(tk.warmup_steps == 0);
  p.job.compression = GradCompression::PowerSgd;
  p.job.powersgd_rank = 4;
  const CompressedReduction ps = compressed_reduction(p, c, 0, g);
  const double h = 4096, kv = 1024, f = 14336, V = 128256;
  const double edges = 32 * ((h + h + 2 * kv) + (h + h) + (h + 2 * f) + (f + h)) + 2 * (V + h);
  const double matrices = 32 * (h * (h + 2 * kv) + h * h + 3 * h * f) + 2 * V * h;
  CHECK(ps.bytes_sent == Approx(2.0 * 7.0 / 8.0 * (4 * edges * 2.0 + (N - matrices) * 2.0)));
  CHECK(ps.warmup_steps == 1000);
  p.job.compression = GradCompression::None;
  const CompressedReduction none = compressed_reduction(p, c, 0, g);
  CHECK(ps.bytes_sent < none.bytes_sent / 50.0);
  CHECK(one.comm_s < none.comm_s / 8.0);
}

TEST_CASE("grad compression: ZeRO compatibility and flag parsing") {
  CHECK(compression_zero_rule(GradCompression::PowerSgd, 0).empty());
  CHECK(!compression_zero_rule(GradCompression::PowerSgd, 1).empty());
  CHECK(!compression_zero_rule(GradCompression::OneBitAdam, 2).empty());
  CHECK(!compression_zero_rule(GradCompression::TopK, 3).empty());
  Job job;
  REQUIRE(parse_grad_compression("powersgd:4", "x", "--grad-compression", job));
  CHECK(job.compression == GradCompression::PowerSgd);
  CHECK(job.powersgd_rank == 4);
  CHECK(grad_compression_text(job) == "powersgd:4");
  REQUIRE(parse_grad_compression("topk:0.01", "x", "--grad-compression", job));
  CHECK(job.topk_fraction == 0.01);
  CHECK(!parse_grad_compression("topk:2", "x", "--grad-compression", job));
  CHECK(!parse_grad_compression("powersgd", "x", "--grad-compression", job));
  CHECK(!parse_grad_compression("zip", "x", "--grad-compression", job));
}

TEST_CASE("grad compression replaces the DP all-reduce in the step") {
  Problem p = fp8_problem();
  ParallelConfig c = dp8();
  c.dp_overlap = false;
  const StageTimes st = stage_times(p, c, 0);
  const double plain = dp_comm(p, c, 0, st).total_s;
  p.job.compression = GradCompression::OneBitLamb;
  const double packed = dp_comm(p, c, 0, st).total_s;
  const CompressedReduction r = compressed_reduction(p, c, 0, place_group(p.hardware, 8, 1));
  CHECK(packed == Approx(r.total_s));
  CHECK(packed < plain);
}
