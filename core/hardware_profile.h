// HardwareProfile: one GPU type, its node and its network, as read from hardware-profiles/*.yaml.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/error.h"

namespace meshplan {

/// Achieved fraction of peak for one dense GEMM that performs `flops` floating-point operations.
/// A profile lists a handful of points; efficiency between them is interpolated in log(flops).
struct EfficiencyPoint {
  double flops = 0.0;       // 2*M*N*K of one GEMM call
  double efficiency = 0.0;  // achieved / peak, in (0, 1]
};

/// One tier of the network: per-GPU bandwidth (one direction) and per-message latency.
struct LinkSpec {
  double bandwidth_bytes_per_s = 0.0;  // per GPU, unidirectional (NVLink: 300e9 on A100)
  double latency_s = 0.0;              // alpha: per-step latency of a collective / p2p message
  double efficiency = 1.0;             // achievable fraction of bandwidth_bytes_per_s (NCCL busbw)
};

/// Where a profile came from: datasheet or a `meshplan calibrate` run.
struct Provenance {
  std::string kind;          // "datasheet" | "calibrated"
  std::string date;          // ISO date of measurement or of the datasheet
  std::string host;          // calibrated: hostname
  std::string tool_version;  // calibrated: meshplan version + git sha
};

/// One published speed curve of a fused attention kernel: forward + backward TFLOP/s at each
/// sequence length, causal mask, 16-bit, as FlashAttention's benchmarks count them (causal FLOPs
/// half of the square: 2 b a s^2 d forward, backward 2.5 x forward; Dao 2023, arXiv:2307.08691,
/// Section 4.1). Sequence lengths ascending.
struct AttentionKernelSpeed {
  std::string kernel;                  // core/framework_knobs.h names: flash2, flash1, triton, cudnn
  int64_t head_dim = 128;              // the benchmark's head dimension
  std::vector<double> seq;             // tokens
  std::vector<double> flops_per_s;     // forward + backward FLOP/s at seq[i]
  std::string version;                 // library release the benchmark ran (cuDNN "9.17.0"); "" = not stated
                                       // (core/attention_library.h picks one curve per head_dim and job)
};

/// Fused attention with FP8 inputs against the 16-bit kernel of the same library release, measured on
/// one shape (Transformer Engine's FP8 dot-product attention, Megatron-Core --fp8-dot-product-attention):
/// time ratios 16-bit / FP8 of the forward and of the backward by sequence length. A ratio below 1 is
/// an FP8 kernel slower than the 16-bit one (cuDNN 9.22's FP8 backward with a sliding window computes
/// the whole causal square). costmodel/fp8_attention.h applies them.
struct Fp8AttentionSpeedup {
  std::string dtype;               // "fp8" (per-tensor scaled: delayed / current recipes) or "mxfp8"
  int64_t head_dim = 128;          // the benchmark's query/key head dimension
  int64_t window = 0;              // the benchmark's sliding window, tokens; 0 = full causal
  std::vector<double> seq;         // tokens, ascending
  std::vector<double> forward;     // 16-bit forward time / FP8 forward time at seq[i]
  std::vector<double> backward;    // the same for the backward
  std::string version;             // library release measured, e.g. cuDNN "9.22.0"
};

/// Measured speedup of whole FP8 linear layers (forward + backward, casts included) over bf16 by the
/// forward GEMM's M x K x N, for a recipe whose speed is not a GEMM rate (torchao's dynamic row-wise
/// scaling: costmodel/fp8_rowwise.h). Empty axes = not measured for this GPU.
struct Fp8LinearSpeedup {
  std::vector<double> m, k, n;   // ascending
  std::vector<double> speedup;   // m.size() * k.size() * n.size() values, n fastest, then k, then m
  bool empty() const { return speedup.empty(); }
};

struct HardwareProfile {
  std::string name;     // file stem, e.g. "a100-80gb-sxm"
  std::string file;     // path it was read from (for error messages)
  std::string source;   // citations (datasheet URLs, papers)
  Provenance provenance;

  // --- one GPU ---
  std::string gpu;                              // marketing name
  double memory_bytes = 0.0;                    // HBM capacity
  double reserved_memory_bytes = 0.0;           // CUDA context, allocator fragmentation: not usable
  std::map<std::string, double> peak_flops;     // dense FLOP/s by dtype: "bf16", "fp16", "tf32", "fp32", "fp8"
  double hbm_bytes_per_s = 0.0;                 // memory bandwidth
  double hbm_efficiency = 0.8;                  // achievable fraction for element-wise kernels
  std::vector<EfficiencyPoint> gemm_efficiency; // sorted by flops ascending
  /// Fraction of the burst-measured GEMM throughput that the GPU holds once it computes at its power
  /// limit, as it does through a training run (stas00/ml-engineering's MSMF / MAMF). gemm_efficiency is
  /// a short benchmark's burst and is multiplied by it (costmodel/README.md "Sustained clocks"); 1 = the
  /// curve already holds under sustained load.
  double sustained_clock_fraction = 1.0;
  /// FP8 GEMMs with full-precision (split) accumulation, the setting of the backward's dgrad and wgrad
  /// GEMMs in Transformer Engine and torchao: their best large-GEMM rate as a share of the FP8 peak,
  /// over the BF16 GEMM's share of the BF16 peak, both measured the same way (gpu.fp8_gemm_relative_efficiency;
  /// costmodel/README.md "FP8 GEMM rate"). The FP8 GEMM curve is the BF16 curve times this. 1 = not measured.
  double fp8_gemm_relative_efficiency = 1.0;
  /// PyTorch's torch._grouped_mm (one grouped kernel for all local experts, what torchtitan's MoE runs), bf16,
  /// forward + backward: its rate over the dense GEMM curve's at the same per-GEMM size
  /// (gpu.torch_grouped_mm.relative_efficiency; costmodel/README.md "Grouped GEMMs of torch"). 0 = not measured:
  /// the dense curve's.
  double torch_grouped_mm_relative_efficiency = 0.0;
  /// torchao's MXFP8 grouped GEMM (_to_mxfp8_then_scaled_grouped_mm: dynamic quantization + scaled grouped
  /// GEMM), forward + backward, as a speedup over the bf16 torch._grouped_mm (gpu.torch_grouped_mm.mxfp8_speedup).
  /// 0 = not measured: the experts run at the FP8 peak with separate casts, as Transformer Engine's.
  double torch_grouped_mm_mxfp8_speedup = 0.0;
  /// CUDA compute capability of the GPU (gpu.compute_capability, e.g. 9.0 Hopper, 10.0 Blackwell B200/GB200);
  /// 0 = not given. What depends on it: whether FP8 GEMMs take only the TN layout, so that Transformer
  /// Engine keeps FP8 transposes (costmodel/fp8.h fp8_gemm_needs_transposes).
  double compute_capability = 0.0;
  /// Fraction of the dense peak a fused (FlashAttention-style) attention kernel reaches on this GPU,
  /// forward and backward; 0 = costmodel/attention.h's default (0.8 / 0.7 x the GEMM curve).
  double fused_attention_forward_efficiency = 0.0;
  double fused_attention_backward_efficiency = 0.0;
  double other_memory_bytes = 0.0;              // workspace + communication buffers per GPU

  // --- node and network ---
  int gpus_per_node = 8;
  int nvlink_domain_gpus = 0;   // GPUs joined by NVLink/NVSwitch (8 HGX, 72 GB200 NVL72); 0 = gpus_per_node
  int nvlink_domain() const { return nvlink_domain_gpus > 0 ? nvlink_domain_gpus : gpus_per_node; }
  LinkSpec intra_node;  // NVLink/NVSwitch or PCIe, per GPU
  LinkSpec inter_node;  // InfiniBand/Ethernet, per GPU (node NICs / gpus_per_node)
  /// GPU <-> host memory, per GPU, one direction (node.host_link; PCIe 5 x16 on HGX, NVLink-C2C on
  /// GB200): carries activation offloading (costmodel/activation_offload.h). bandwidth 0 = not listed.
  LinkSpec host_link{0.0, 0.0, 1.0};
  double dollars_per_gpu_hour = 0.0;            // for --objective cost; 0 = unknown

  double usable_memory_bytes() const { return memory_bytes - reserved_memory_bytes; }
  /// Dense peak for `dtype`; 0 when the profile does not list it.
  double peak_flops_for(const std::string& dtype) const;
  /// The same as fused_attention_*_efficiency for cuDNN's fused attention (Transformer Engine's
  /// FusedAttention backend, which Megatron-Core/NeMo run on Hopper); 0 = the profile has no figure
  /// for it and the fused_attention_* values apply (costmodel/attention.cpp).
  double cudnn_attention_forward_efficiency = 0.0;
  double cudnn_attention_backward_efficiency = 0.0;
  /// Published speed curves of fused attention kernels on this GPU (costmodel/attention_speed.h);
  /// empty = the efficiencies above apply at every sequence length.
  std::vector<AttentionKernelSpeed> attention_kernel_speeds;
  /// gpu.fp8_attention_speedup: FP8 fused attention against 16-bit, by shape; empty = not measured.
  std::vector<Fp8AttentionSpeedup> fp8_attention_speedups;
  /// torchao float8 row-wise linear layers against bf16 (gpu.fp8_rowwise_speedup); empty = none.
  Fp8LinearSpeedup fp8_rowwise_speedup;
};

/// Checks a profile for missing or non-positive values; `file` names the source.
ErrorList validate_hardware(const HardwareProfile& hw);

}  // namespace meshplan
