// Kernel times on one GPU: GEMMs through the profile's efficiency curve, element-wise ops through
// HBM bandwidth; per-layer forward/backward costs of one micro-batch under a TP/SP split.
#pragma once
#include "core/hardware_profile.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Achieved/peak for one GEMM of `flops` in a training step: the profile's burst curve, piecewise
/// linear in log(flops) between its points and clamped to the first/last point outside their range,
/// times the GPU's sustained_clock_fraction (the clock it holds at its power limit; the fused-attention
/// figures keep their published speed, costmodel/README.md "Sustained clocks").
double gemm_efficiency(const HardwareProfile& hw, double flops);

/// The profile's burst curve alone (what a short benchmark of one GEMM measures).
double burst_gemm_efficiency(const HardwareProfile& hw, double flops);

/// flops / (peak * gemm_efficiency(flops')), flops' = flops * bf16 peak / peak when peak is above the bf16
/// peak (FP8): the curve, measured on BF16 GEMMs, falls at small sizes through per-GEMM costs that are
/// time (launch, prologue and epilogue, the last wave), so a faster GEMM is read where a BF16 one of the
/// same duration is (costmodel/README.md "FP8 GEMM rate").
double gemm_time_s(const HardwareProfile& hw, double peak_flops_per_s, double flops);

/// Memory-bound kernel moving `bytes` (reads + writes): bytes / (hbm bandwidth * hbm_efficiency).
double memory_bound_time_s(const HardwareProfile& hw, double bytes);

/// Dense peak FLOP/s for the job's dtype (bf16 when the profile lacks that dtype).
double job_peak_flops(const Problem& p);

/// Seconds of one transformer layer for one micro-batch on one GPU. Compute only: TP
/// communication is in LayerComm. backward = backward_input + backward_weight.
struct LayerCompute {
  double forward_s = 0;          // GEMMs/t + attention core/t + element-wise
  double backward_input_s = 0;   // dX GEMMs + attention core backward + element-wise backward
  double backward_weight_s = 0;  // dW GEMMs
  double recompute_s = 0;        // extra forward work before backward (selective: attention core)
  double qkv_dw_s = 0;           // dW of the QKV projection (hides the first backward TP collective)
  double mlp_up_dw_s = 0;        // dW of the MLP input projection(s) (hides the second)
  double dx_gemm_s = 0;          // all dX GEMMs (hide SP input re-gathers)
  double expert_forward_s = 0;   // MoE: routed experts' forward after the dispatch (GEMMs, activation,
                                 // permutations), in forward_s; what the host's post-sync issue races (host_launch.h)
  double host_wait_s = 0;        // GPU idle waiting for the host to issue work (costmodel/host_launch.h), in forward_s / backward_input_s
};

LayerCompute layer_compute(const Problem& p, const ParallelConfig& cfg);

/// Exposed TP communication of one layer for one micro-batch (Megatron-LM): forward 2 all-reduces
/// (SP: 2 all-gathers + 2 reduce-scatters); backward the 2 conjugate collectives of the
/// column-parallel inputs overlap with their dW GEMMs (async TP all-reduce / SP reduce-scatter), and
/// with SP the 2 all-gathers of the row-parallel outputs' gradients and the 2 re-gathers of the
/// sharded column-parallel inputs are exposed; full recompute repeats the forward's collectives.
struct LayerComm {
  double forward_s = 0;
  double backward_s = 0;   // exposed part only
  double recompute_s = 0;  // full recompute: the forward collectives again
  double collective_s = 0; // one all-reduce-equivalent of the s*b*h activation (2 for SP AG+RS)
  double hidden_s = 0;     // backward collectives (or parts) that run under the dW GEMMs
  double expert_s = 0;     // MoE: dispatch + combine of one pass (inside forward_s and backward_s)
};

/// Seconds of compute lost per second of communication hidden under it. NCCL's kernels occupy SMs
/// while they run concurrently with GEMMs (on A100 a ring/tree collective uses 8-16 of the 108 SMs
/// for its channels, on H100 up to 32 of 132) and their reads and writes share HBM, so overlapped
/// communication is not free. Measured: "Characterizing Compute-Communication Overlap
/// in GPU-Accelerated Distributed Deep Learning" (arXiv 2507.03114, 2025, abstract): computation overlapped
/// with communication runs on average 18.9 % slower (up to 40 %) than alone, over GPT and LLaMA models
/// on 4 x A100, H100, MI250 and MI210; compute under h seconds of overlap therefore loses 0.189 h.
/// (Until the thirtieth session 0.1, the middle of A100's SM share, a guess; Calculon charges a similar
/// "processor usage", 0.15 for NVLink collectives.) Applied to TP collectives hidden behind dW GEMMs
/// and to DP/ZeRO communication hidden behind backward.
constexpr double kOverlapComputeSlowdown = 0.189;

LayerComm layer_tp_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c);

/// Embedding lookup (first chunk) and LM head + cross entropy (last chunk), one micro-batch.
struct EndsCompute {
  double embedding_forward_s = 0;
  double embedding_backward_s = 0;
  double head_forward_s = 0;
  double head_backward_input_s = 0;
  double head_backward_weight_s = 0;
  double head_tp_comm_forward_s = 0;   // SP: all-gather of the final hidden state before the LM head
  double head_tp_comm_backward_s = 0;  // its conjugate (SP: reduce-scatter; else all-reduce of dX)
};

EndsCompute ends_compute(const Problem& p, const ParallelConfig& cfg);

}  // namespace meshplan
