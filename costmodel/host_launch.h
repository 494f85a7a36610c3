// Host (CPU) time Megatron-Core's eager PyTorch code takes to issue a layer's GPU work, and the
// launch-bound floor it puts under the layer's GPU time.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/compute_time.h"

namespace meshplan {

/// Host seconds of one mean layer, one micro-batch. Megatron-Core runs each layer as a chain of
/// Python-issued PyTorch / Transformer Engine ops; the GPU idles whenever the host issues them slower
/// than the GPU runs them (NVIDIA's Megatron-Core MoE report, arXiv 2603.07685 sec. 4.3.1: "the CPU
/// cannot dispatch work fast enough to keep the GPU saturated"). Counts per layer, from the code paths
/// at Megatron-Core core_v0.15.0 / core_r0.16.0 and Transformer Engine v2.9-v2.10 (costmodel/README.md
/// "Host launch time" has the table and the citations):
///  - op: a launch issued from Python (a PyTorch or TE op, a Triton kernel, an NCCL call) at
///    kHostOpSeconds each; per expert: the cuBLASLt GEMMs and quantization kernels TE's GroupedLinear
///    launches in a C++ loop over the E_l local experts (one cuBLAS GEMM per expert over 4 streams,
///    cublaslt_gemm.cu multi_stream_cublas_gemm; split_quantize quantizes expert by expert except under
///    delayed scaling) at kHostLaunchSeconds each.
///  - a captured scope (core/cuda_graphs.h) costs one op per replay, forward and backward.
struct HostLaunchTimes {
  double forward_s = 0;     // issuing the forward
  double backward_s = 0;    // issuing the backward (and a full recompute's forward)
  double post_sync_s = 0;   // MoE layers: forward ops issued after the dispatcher's device-to-host sync
  bool syncs = false;       // the MoE layers' forward blocks on a device-to-host copy (dropless token counts)
};

/// Zero unless the job runs Megatron-Core's model code (FrameworkKnobs::megatron_core_model_code).
HostLaunchTimes host_launch_times(const Problem& p, const ParallelConfig& cfg);

/// Host seconds per op issued from Python and per launch from TE's C++ expert loop. kHostOpSeconds
/// is tuned, on the three `use: tuning` rows of validation/megatron-bridge-moe-h100.yaml (Qwen3-30B-A3B
/// on 16 H100, EP 16, MBS 1, eager: launch-bound; releases 26.04, 26.04.01, 26.06); kHostLaunchSeconds is
/// PyTorch's own "on the order of 2 us" per torch function on a tensor
/// (benchmarks/overrides_benchmark/README.md) plus the launch.
extern const double kHostOpSeconds;
extern const double kHostLaunchSeconds;

/// The launch-bound floor: forward = max(GPU forward + exposed sync wait, host forward), backward =
/// max(GPU backward, host backward), per mean layer; the GPU forward and backward are `c` and `comm`
/// as costed. After the dispatcher's sync the GPU queue is empty and the host issues the expert part
/// op by op: the GPU waits max(0, host post-sync - GPU post-sync) per MoE layer (its expert GEMMs,
/// activation, permutations: c.expert_forward_s, per mean layer; and the dispatch/combine). The combined
/// 1F1B EP overlap queues the other micro-batch's backward before the sync, hiding that wait. Adds the
/// idle time to c.forward_s / c.backward_input_s and records it in c.host_wait_s.
void apply_host_launch_floor(const Problem& p, const ParallelConfig& cfg, LayerCompute& c, const LayerComm& comm);

}  // namespace meshplan
