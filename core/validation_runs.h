// Published training runs (model, cluster, parallel layout, measured iteration time) to validate against.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace meshplan {

/// One published run. The iteration time is, in this order of preference: iteration_s;
/// global_batch * seq / (tokens_per_s_per_gpu * gpus); FLOPs(set's flops_formula) / (tflops_per_gpu
/// * gpus); FLOPs / (mfu * gpus * set's mfu peak).
struct ValidationRun {
  std::string label;            // "gpt-175b full" (model + recompute when not given)
  std::string model;            // key into ValidationSet::models
  int64_t gpus = 0;
  int tp = 1, pp = 1, dp = 1;
  int zero_stage = 0;
  int64_t global_batch = 0;     // sequences per iteration
  int64_t micro_batch = 1;
  int64_t seq_len = 0;          // 0: the set's seq_len
  int virtual_stages = 1;
  Recompute recompute = Recompute::None;
  bool sequence_parallel = false;
  bool dp_overlap = true;       // DP gradient reduction overlapped with backward (Megatron >= 2023)
  ScheduleKind schedule = ScheduleKind::OneFOneB;  // interleaved when virtual_stages > 1
  double iteration_s = 0;       // published iteration time (0 when only TFLOP/s is published)
  double tflops_per_gpu = 0;    // published achieved TFLOP/s per GPU (0 when not published)
  double tokens_per_s_per_gpu = 0;  // published tokens/s per GPU (0 when not published)
  double mfu = 0;               // published MFU (0 when not published), against the set's mfu peak
  int shard_group = 0;          // HSDP: DP ranks one ZeRO-2/3 shard group spans (0 or dp = all; costmodel/hsdp.h)
  std::string flops_formula;    // overrides the set's flops_formula for this run ("" = the set's)
  int cp = 1;                   // context-parallel size
  AttentionKind attention = AttentionKind::Fused;  // the run's attention kernel (set default, run override)
  std::string framework;        // megatron | deepspeed | fsdp | ... (informative; sets ZeRO-3 granularity)
  bool fp8 = false;             // FP8 linear GEMMs (Transformer Engine / torchao)
  AcPolicy ac_policy;           // `ac_policy:` how selective/full is carried out (core/ac_policy.h)
  bool tuning = false;          // `use: tuning`: a profile parameter was set on this run
  /// `use: regression`: the publisher itself reports this figure as a software performance regression;
  /// `regression:` quotes where (a footnote, a maintainer's issue). Predicted and printed, not scored.
  std::string regression;
  bool held_out() const { return !tuning && regression.empty(); }
  std::string note;             // assumptions made where the paper is silent
  bool tp_comm_overlap = false;       // Megatron --tp-comm-overlap (FrameworkKnobs::tp_comm_overlap)
  bool overlap_param_gather = false;  // Megatron --overlap-param-gather (FrameworkKnobs::param_gather_overlap)
  bool moe_a2a_overlap = false;       // Megatron-Core --overlap-moe-expert-parallel-comm (FrameworkKnobs)
  bool fused_grouped_mlp = false;     // Megatron-Core's TE op-fuser grouped MLP (FrameworkKnobs)
  bool yarn_rope_fused = false;       // Megatron-Core <= 0.15: TE's fused RoPE even for YaRN (FrameworkKnobs)
  int activation_offload_layers = 0;  // Megatron-Core --cpu-offloading-num-layers (FrameworkKnobs)
  bool unpad_attention = false;       // model code unpads q/k/v around flash_attn (FrameworkKnobs::unpad_attention)
  bool fms_model_code = false;        // `model_code: fms`: fms's eager Llama code (FrameworkKnobs::fms_model_code)
  bool fp8_param_gather = false;      // Megatron-Core --fp8-param-gather (FrameworkKnobs::fp8_param_gather)
  bool fp8_attention = false;         // Megatron-Core --fp8-dot-product-attention (FrameworkKnobs::fp8_attention)
  OptimizerStates optimizer_states;   // Megatron-Core's precision-aware optimizer (`precision_aware_optimizer`,
                                      // `main_params_dtype`, `exp_avg_dtype`, `exp_avg_sq_dtype`; FrameworkKnobs)
  std::string fp8_recipe;       // issue 11: "" (the framework's default, delayed), current-scaling, tensorwise, rowwise, blockwise, mxfp8
  std::string cp_comm;          // issue 11: "" = p2p (Megatron-Core default), all_gather, a2a
  int ep = 1;                   // expert-parallel size (MoE runs)
  int etp = 1;                  // expert tensor-parallel size (MoE runs; tables that omit it: see `assumed`)
  std::string fused_kernel;     // flash2 | flash1 | triton | cudnn; "" = the framework's (core/framework_knobs.h)
  std::optional<bool> torch_compile;  // torchtitan's compile: absent = its default (FrameworkKnobs::torch_compile)
  bool fused_rmsnorm = false;   // torchtitan's norm_type fused_rmsnorm (FrameworkKnobs::fused_rmsnorm)
  bool tp_async_allreduce = true;  // `tp_async_allreduce:` false = the code of the run all-reduced dX synchronously (FrameworkKnobs)
  bool dp_all_reduce = false;   // ZeRO-1 gradients all-reduced (DeepSpeed BF16_Optimizer; FrameworkKnobs)
  int64_t ddp_bucket_size = 0; // `ddp_bucket_size:` Megatron-Core DDP bucket, parameters; 0 = its default (FrameworkKnobs)
  double dp_reduce_bytes = 0;   // `dp_reduce_dtype:` bf16|fp16 = 2, fp32 = 4; 0 = the convention's (FrameworkKnobs)
  bool grad_accumulation_pass = false;  // DeepSpeed BF16_Optimizer's fp32 accumulation pass (FrameworkKnobs)
  std::string cross_entropy;    // unfused | fused | torch_fp32 | te_inplace | te | flash_xentropy | generic; "" = the framework's (FrameworkKnobs::cross_entropy)
  int train_metric_cross_entropies = 0;  // FrameworkKnobs::train_metric_cross_entropies (Composer's train metrics: 2)
  std::string cudnn_version;    // the container's cuDNN release ("9.18.0"); "" = the profile's newest cudnn curve
  std::string te_version;       // the container's Transformer Engine release ("2.2"); "" = today's (core/te_attention_backend.h)
  double moe_imbalance = 1.0;   // the busiest expert's tokens / mean where published (Job::moe_imbalance)
  double moe_capacity_factor = 0.0;  // Megatron-Core --moe-expert-capacity-factor; 0 = dropless (Job)
  std::string moe_routing;      // natural | forced | capacity, as the source states it; "" = not stated (regime notes)
  std::optional<bool> forward_prefetch;  // FSDP1 forward_prefetch; absent = the framework's (ShardingKnobs)
  std::string backward_prefetch;         // FSDP1 backward_prefetch pre | post | none; "" = the framework's
  ParamConvention convention = ParamConvention::Default16;  // `bytes_per_param:` (file level, run override)
  double mfu_peak_flops = 0;    // `mfu_peak_tflops:` of this run's source (0 = the set's)
  // Published facts checked, not costed (costmodel/validate.h check_published_facts):
  int64_t published_params = 0;         // `published_params:` exact parameter count the source prints
  double published_params_billion = 0;  // `published_params_billion:` the same, rounded to 0.1 B
  double published_memory_gib = 0;      // `memory_gib:` published peak memory per GPU, GiB (max over GPUs)
  std::vector<int> layers_per_stage;    // `layers_per_stage:` per-chunk layers (Megatron's pipeline layout)
  std::optional<int64_t> mtp_layers;    // `mtp_layers:` MTP modules trained, overriding the model's
  std::string moe_dispatcher;           // `moe_dispatcher:` alltoall | deepep | hybridep; "" = alltoall
  uint32_t recompute_modules = 0;       // `recompute_modules:` Megatron-Core selective modules (core/recompute_modules.h)
  uint32_t cuda_graphs = 0;             // `cuda_graphs:` Megatron-Core CUDA graph scopes (core/cuda_graphs.h)
  // Recorded, not costed: torchtitan's async TP (`async_tp:`; costmodel/README.md says why).
  bool async_tp = false;
};

/// One file of validation/: a source, the hardware the runs used, model shapes and runs.
struct ValidationSet {
  std::string file;             // path it was read from
  std::string name;             // file stem
  std::string source;           // citation
  std::string hardware;         // shipped profile name, e.g. a100-80gb-sxm
  std::string dtype = "bf16";
  ParamConvention convention = ParamConvention::Default16;  // `bytes_per_param:` of the framework
  int64_t seq_len = 2048;
  /// How the paper turns FLOPs into TFLOP/s: "megatron" = Narayanan et al. 2021 eq. 3,
  /// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration (full recompute counted), or "model" =
  /// 3x forward FLOPs without recomputation, or "" when runs give iteration_s.
  std::string flops_formula;
  double mfu_peak_flops = 0;    // peak the source's MFU is relative to (`mfu_peak_tflops`), 0 = profile's
  std::vector<std::pair<std::string, ModelSpec>> models;
  std::vector<ValidationRun> runs;

  const ModelSpec* find_model(const std::string& key) const {
    for (const auto& [k, m] : models)
      if (k == key) return &m;
    return nullptr;
  }
};

/// Parses a validation YAML file (schema in validation/README.md). Errors name file, field and value.
/// A validation file's fp8_recipe name (validation/README.md): delayed, current-scaling and tensorwise
/// (both Current), rowwise, blockwise, mxfp8. "" is no name: the framework's default.
std::optional<Fp8Recipe> parse_validation_fp8_recipe(const std::string& name);

Result<ValidationSet> parse_validation(const std::string& text, const std::string& file);
Result<ValidationSet> load_validation(const std::string& path);

}  // namespace meshplan
