// The framework table (what each framework runs, its conventions and defaults, with citations) and
// the check of one configuration against it.
//
// Sources (read at these commits/versions; line numbers as of then):
//  [M]  NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553
//       megatron/core/transformer/transformer_config.py:188,191  hidden_dropout = 0.1,
//         attention_dropout = 0.1 (also the --hidden-dropout/--attention-dropout defaults, since
//         megatron/training/arguments.py builds those flags from TransformerConfig)
//       megatron/training/arguments.py:3671  --main-grads-dtype default 'fp32' (4-byte main grads
//         with --bf16); :3156 --use-distributed-optimizer (shards fp32 master + Adam over DP: ZeRO-1)
//       megatron/training/theoretical_memory_usage.py num_bytes_per_parameter: 18, or 6 + 12/DP
//         with the distributed optimizer
//       megatron/training/arguments.py:3103 --pipeline-model-parallel-layout (any split, incl.
//         uneven), :3118 --no-overlap-p2p-communication (overlap on by default, so interleaved
//         runs with pp >= 2); schedules: 1F1B, or interleaved 1F1B with virtual stages; no ZB-H1,
//         GPipe or ZeRO-2/3 flag in pretrain_gpt.py's arguments
//       megatron/core/distributed/distributed_data_parallel.py:134  DP bucket =
//         max(40000000, 1000000 * dp) parameters (sized per DP: dp_bucket_bytes = 0 here)
//  [D]  deepspeed 0.19.8 (PyPI)
//       deepspeed/runtime/pipe/engine.py:77  "ZeRO-2 and ZeRO-3 are incompatible with pipeline
//         parallelism"; deepspeed/runtime/pipe/schedule.py TrainSchedule (1F1B, no interleaving)
//       deepspeed/runtime/engine.py get_data_types: grad_accum_dtype defaults to the model dtype
//         (bf16: 2-byte gradients) -> 16 B/param as in the ZeRO paper (K = 12)
//       deepspeed/runtime/zero/config.py: reduce_bucket_size, stage3_prefetch_bucket_size (their
//         defaults: ShardingKnobs in framework_knobs.h); activation checkpointing is whole-layer
//         (deepspeed.checkpointing)
//       deepspeed/runtime/pipe/module.py:133 partition_method='parameters' (exports ask 'uniform',
//         which needs equal chunks)
//  [T]  pytorch/torchtitan 238fa9953e4aec2a62582121564273d7cbb1e9f1 (last commit with TOML job
//       configs; b5bcd76c moved them to Python, same keys)
//       torchtitan/config/job_config.py:282,290  mixed_precision_param bfloat16,
//         mixed_precision_reduce float32 (fp32 gradients); :396 pipeline_parallel_schedule "1F1B"
//         (also Interleaved1F1B, GPipe; torch.distributed.pipelining has no single-chunk ZB-H1);
//         :336 fsdp_reshard_after_forward (always = ZeRO-3, never = ZeRO-2 like SHARD_GRAD_OP);
//         :652 activation_checkpoint.mode selective|full|none; TP plans use SequenceParallel for
//         norms (torchtitan/models/llama3/infra/parallelize.py), i.e. SP whenever tp > 1
//       torchtitan/config/job_config.py:721-723  class Compile: enable: bool = False ("Whether to
//         apply torch.compile"); earlier the flag --training.compile (action="store_true",
//         torchtitan/config_manager.py:399 at 9dec370ad) and `compile = false` in
//         train_configs/llama3_{8b,70b}.toml at 1ea476e9f, 9dec370ad and in 238fa9953's TOMLs
//  [F]  PyTorch FSDP (torch.distributed.fsdp ShardingStrategy): FULL_SHARD (ZeRO-3),
//       SHARD_GRAD_OP (ZeRO-2), NO_SHARD (DDP); no tensor or pipeline parallelism of its own
//  [N]  NeMo megatron_gpt_config.yaml (NVIDIA/NeMo examples/nlp/language_modeling/conf): Megatron
//       Core underneath, so Megatron's rules; distributed_fused_adam = distributed optimizer
//  The fsdp/torchtitan convention (bf16 working copy 2 + fp32 grads 4 + fp32 params and Adam 12)
//  over-counts FULL_SHARD by the 2/DP bytes of a bf16 shard that FSDP2 does not keep: conservative.
#include "core/framework.h"

#include "core/mtp_config.h"

#include <algorithm>

#include "core/framework_knobs.h"
#include "core/hsdp_config.h"
#include "core/job_features.h"

namespace meshplan {

namespace {

using S = ScheduleKind;
using R = Recompute;

FrameworkSpec meshplan_spec() {
  FrameworkSpec f;
  f.id = Framework::Meshplan;
  f.name = "meshplan";
  f.runs_with = "meshplan run";
  f.schedules = {S::GPipe, S::OneFOneB, S::Interleaved, S::ZeroBubbleH1, S::DualPipeV};
  f.zero_stages = {0, 1, 2, 3};
  f.zero_stages_with_pp = {0, 1, 2, 3};
  f.recomputes = {R::None, R::Selective, R::Full};
  f.convention = ParamConvention::Default16;
  return f;
}

FrameworkSpec megatron_spec() {
  FrameworkSpec f;
  f.id = Framework::Megatron;
  f.name = "megatron";
  f.runs_with = "Megatron-LM pretrain_gpt.py";
  f.schedules = {S::OneFOneB, S::Interleaved};
  // 1 = --use-distributed-optimizer; 2 and 3 = Megatron-FSDP (--use-megatron-fsdp
  // --data-parallel-sharding-strategy optim_grads / optim_grads_params, [M] megatron/training/
  // arguments.py; per-TransformerLayer units, megatron/core/distributed/fsdp/mcore_fsdp_adapter.py),
  // as Megatron-Bridge's Llama 3 70B presets run it ("FSDP 64"). Costed at pp = 1 only: how it gathers
  // under a pipeline schedule is not modelled.
  f.zero_stages = {0, 1, 2, 3};
  f.zero_stages_with_pp = {0, 1};
  f.recomputes = {R::None, R::Selective, R::Full};
  f.convention = ParamConvention::Megatron;
  f.default_dropout = 0.1;
  // HSDP at ZeRO-1: --num-distributed-optimizer-instances R, the partial distributed optimizer (since
  // core_r0.10.0, MR !2170): optimizer state sharded within dp/R consecutive ranks, gradients
  // reduce-scattered there and all-reduced across the R instances ([M] megatron/core/parallel_state.py
  // intra/inter_distributed_optimizer_instance groups; distributed/param_and_grad_buffer.py).
  // Megatron-FSDP's own hybrid mode (--num-distributed-optimizer-instances with --outer-dp-sharding-
  // strategy) is not costed: HSDP at ZeRO-1 only.
  f.hsdp_zero_stages = {1};
  return f;
}

FrameworkSpec nemo_spec() {
  FrameworkSpec f = megatron_spec();
  f.id = Framework::Nemo;
  f.name = "nemo";
  f.runs_with = "NeMo megatron_gpt_pretraining.py";
  f.equal_pipeline_chunks = true;  // the YAML export carries no pipeline layout
  f.hsdp_zero_stages = {};         // nor a number of distributed-optimizer instances: no HSDP
  f.zero_stages = {0, 1};          // nor Megatron-FSDP (NeMo's model.fsdp is PyTorch FSDP, not costed)
  f.zero_stages_with_pp = {0, 1};
  return f;
}

FrameworkSpec deepspeed_spec() {
  FrameworkSpec f;
  f.id = Framework::DeepSpeed;
  f.name = "deepspeed";
  f.runs_with = "deepspeed (PipelineModule; tp > 1 through a Megatron mpu)";
  f.equal_pipeline_chunks = true;
  f.schedules = {S::OneFOneB};
  f.zero_stages = {0, 1, 2, 3};
  f.zero_stages_with_pp = {0, 1};
  f.recomputes = {R::None, R::Full};
  f.sequence_parallel = SequenceParallelRule::Never;
  f.convention = ParamConvention::Default16;
  // DeepSpeed's reduce_bucket_size and stage3_prefetch_bucket_size defaults (framework_knobs.h
  // ShardingKnobs, with their citation), as bytes of bf16 elements.
  const ShardingKnobs deepspeed_defaults;
  f.dp_bucket_bytes = deepspeed_defaults.reduce_bucket_elements * 2.0;
  f.zero3_prefetch_bytes = deepspeed_defaults.prefetch_bucket_elements * 2.0;
  return f;
}

FrameworkSpec torchtitan_spec() {
  FrameworkSpec f;
  f.id = Framework::Torchtitan;
  f.name = "torchtitan";
  f.runs_with = "torchtitan train.py (FSDP2 + TP + PP)";
  f.equal_pipeline_chunks = true;
  // DualPipeV: torch.distributed.pipelining ScheduleDualPipeV, which torchtitan builds for
  // pipeline_parallel_schedule "DualPipeV" (torchtitan/distributed/pipeline_parallel.py at b5bcd76c6, "v"
  // stage placement); it refuses stages built with torch.compile (_check_torch_compile_compatibility).
  f.schedules = {S::GPipe, S::OneFOneB, S::Interleaved, S::DualPipeV};
  f.zero_stages = {0, 2, 3};
  f.zero_stages_with_pp = {0, 2, 3};
  f.recomputes = {R::None, R::Selective, R::Full};
  f.sequence_parallel = SequenceParallelRule::AlwaysWithTp;
  f.convention = ParamConvention::Megatron;  // bf16 compute, fp32 reduce and params
  // HSDP: [parallelism] data_parallel_replicate_degree x data_parallel_shard_degree ("If
  // data_parallel_shard_degree is also greater than 1, the parallelism method used is HSDP",
  // torchtitan/config/configs.py at b5bcd76c6; job_config.py before); PyTorch FSDP1's
  // ShardingStrategy.HYBRID_SHARD / _HYBRID_SHARD_ZERO2 (torch/distributed/fsdp/api.py).
  f.hsdp_zero_stages = {2, 3};
  return f;
}

FrameworkSpec fsdp_spec() {
  FrameworkSpec f = torchtitan_spec();
  f.id = Framework::Fsdp;
  f.name = "fsdp";
  f.runs_with = "PyTorch FSDP (FULL_SHARD / SHARD_GRAD_OP / NO_SHARD)";
  f.tensor_parallel = false;
  f.pipeline_parallel = false;
  f.schedules = {};
  f.recomputes = {R::None, R::Full};
  f.sequence_parallel = SequenceParallelRule::Never;
  return f;
}

bool contains_schedule(const std::vector<ScheduleKind>& v, ScheduleKind s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string join_zero(const std::vector<int>& v) {
  std::string s;
  for (int z : v) s += (s.empty() ? "" : ", ") + std::to_string(z);
  return s;
}

std::string join_schedules(const std::vector<ScheduleKind>& v) {
  std::string s;
  for (ScheduleKind k : v) s += (s.empty() ? "" : ", ") + std::string(to_string(k));
  return s.empty() ? "none (pp = 1 only)" : s;
}

std::string join_recompute(const std::vector<Recompute>& v) {
  std::string s;
  for (Recompute r : v) s += (s.empty() ? "" : ", ") + std::string(to_string(r));
  return s;
}

}  // namespace

const char* to_string(Framework f) { return framework_spec(f).name; }

std::optional<Framework> parse_framework(const std::string& s) {
  for (auto f : {Framework::Meshplan, Framework::Megatron, Framework::DeepSpeed, Framework::Fsdp,
                 Framework::Torchtitan, Framework::Nemo})
    if (s == to_string(f)) return f;
  if (s == "megatron-lm") return Framework::Megatron;
  return std::nullopt;
}

std::string framework_names() { return "megatron, deepspeed, fsdp, torchtitan, nemo or meshplan"; }

const FrameworkSpec& framework_spec(Framework f) {
  static const FrameworkSpec table[] = {meshplan_spec(), megatron_spec(), deepspeed_spec(),
                                        fsdp_spec(),     torchtitan_spec(), nemo_spec()};
  for (const FrameworkSpec& s : table)
    if (s.id == f) return s;
  return table[0];
}

bool framework_admits_zero(const FrameworkSpec& f, int zero_stage, int pp) {
  const std::vector<int>& v = pp > 1 ? f.zero_stages_with_pp : f.zero_stages;
  return std::find(v.begin(), v.end(), zero_stage) != v.end();
}

bool framework_admits_schedule(const FrameworkSpec& f, ScheduleKind s, int pp) {
  if (pp == 1) return s == ScheduleKind::OneFOneB;
  return contains_schedule(f.schedules, s);
}

bool schedule_admits_compile(const Job& job, ScheduleKind s) {
  return !(job.framework == Framework::Torchtitan && s == ScheduleKind::DualPipeV && job.knobs.torch_compile);
}

bool framework_admits_recompute(const FrameworkSpec& f, Recompute r) {
  return std::find(f.recomputes.begin(), f.recomputes.end(), r) != f.recomputes.end();
}

bool framework_admits_sp(const FrameworkSpec& f, bool sp, int tp) {
  switch (f.sequence_parallel) {
    case SequenceParallelRule::Optional: return true;
    case SequenceParallelRule::AlwaysWithTp: return sp == (tp > 1);
    case SequenceParallelRule::Never: return !sp;
  }
  return true;
}

ErrorList validate_framework(const Problem& p, const ParallelConfig& c, const std::string& w) {
  const FrameworkSpec& f = framework_spec(p.job.framework);
  const std::string by = std::string(" under --framework ") + f.name;
  ErrorList e;
  if (c.tp > 1 && !f.tensor_parallel)
    e.push_back(make_error(w, "--tp", std::to_string(c.tp), "tensor parallelism is not available" + by,
                           "use --tp 1, or --framework torchtitan for FSDP2 + TP"));
  if (c.pp > 1 && !f.pipeline_parallel)
    e.push_back(make_error(w, "--pp", std::to_string(c.pp), "pipeline parallelism is not available" + by,
                           "use --pp 1, or --framework torchtitan for FSDP2 + PP"));
  if (c.pp > 1 && f.pipeline_parallel && !framework_admits_schedule(f, c.schedule, c.pp))
    e.push_back(make_error(w, "--schedule", to_string(c.schedule), "is not a schedule" + by,
                           "use " + join_schedules(f.schedules)));
  if (!framework_admits_zero(f, c.zero_stage, c.pp))
    e.push_back(make_error(w, "--zero", std::to_string(c.zero_stage),
                           "is not available" + by + (c.pp > 1 ? " with pp > 1" : ""),
                           "use --zero " + join_zero(c.pp > 1 ? f.zero_stages_with_pp : f.zero_stages)));
  // deepspeed/runtime/engine.py _configure_zero_optimizer: `assert not self.has_moe_layers, "MoE not
  // supported with Stage 3"` (in every engine.py read; DeepSpeed's own AutoEP test
  // test_zero3_ep_rejected_2gpu expects that AssertionError).
  if (f.id == Framework::DeepSpeed && p.model.moe.enabled() && c.zero_stage >= 3)
    e.push_back(make_error(w, "--zero", std::to_string(c.zero_stage),
                           "DeepSpeed refuses ZeRO-3 with MoE layers (\"MoE not supported with Stage 3\")",
                           "use --zero 1 or 2, or --framework torchtitan (FSDP2 over the experts)"));
  if (hsdp_enabled(c) && f.hybrid_sharding() && c.zero_stage >= 1 &&
      std::find(f.hsdp_zero_stages.begin(), f.hsdp_zero_stages.end(), c.zero_stage) == f.hsdp_zero_stages.end())
    e.push_back(make_error(w, "--shard-group", std::to_string(c.shard_group),
                           "hybrid sharding (HSDP) at zero=" + std::to_string(c.zero_stage) + " is not available" + by,
                           "use --zero " + join_zero(f.hsdp_zero_stages) + " with --shard-group, or drop --shard-group"));
  if (hsdp_enabled(c) && !f.hybrid_sharding())
    e.push_back(make_error(w, "--shard-group", std::to_string(c.shard_group),
                           "hybrid sharding (HSDP) is not available" + by,
                           "use --framework fsdp or torchtitan (ZeRO 2/3) or megatron (ZeRO 1), or drop --shard-group"));
  if (!framework_admits_recompute(f, c.recompute))
    e.push_back(make_error(w, "--recompute", to_string(c.recompute), "is not a mode" + by,
                           "use " + join_recompute(f.recomputes)));
  if (!framework_admits_sp(f, c.sequence_parallel, c.tp))
    e.push_back(make_error(w, "--sequence-parallel", c.sequence_parallel ? "on" : "off",
                           f.sequence_parallel == SequenceParallelRule::Never
                               ? "is not available" + by
                               : "is always on with tp > 1" + by,
                           f.sequence_parallel == SequenceParallelRule::Never
                               ? "drop --sequence-parallel"
                               : "pass --sequence-parallel when tp > 1"));
  const int64_t chunks = static_cast<int64_t>(c.pp) * std::max(1, c.virtual_stages);
  if (f.equal_pipeline_chunks && c.pp > 1 &&
      (p.model.num_layers % chunks != 0 || !c.layers_per_stage.empty()))
    e.push_back(make_error(w, "--pp", std::to_string(c.pp),
                           std::to_string(p.model.num_layers) + " layers do not split into " +
                               std::to_string(chunks) + " equal pipeline chunks, which" + by +
                               " the export needs",
                           "use a pp (x v) dividing the layers, or --framework megatron"));
  // FP8: torchtitan's float8 is torchao's (tensorwise, costed as current scaling, or rowwise); the
  // Megatron stacks run Transformer Engine's recipes, which have no row-wise one.
  const bool torchao = f.id == Framework::Torchtitan;
  if (p.job.fp8 == Fp8Recipe::Rowwise && !torchao && f.id != Framework::Meshplan)
    e.push_back(make_error(w, "--fp8", "rowwise", std::string("is torchao's recipe, not Transformer Engine's,") + by,
                           "use --fp8 current, delayed, blockwise or mxfp8, or --framework torchtitan"));
  if (torchao && p.job.fp8 != Fp8Recipe::None && p.job.fp8 != Fp8Recipe::Current && p.job.fp8 != Fp8Recipe::Rowwise)
    e.push_back(make_error(w, "--fp8", to_string(p.job.fp8), "is not a torchao float8 recipe" + by,
                           "use --fp8 current (torchao tensorwise) or rowwise"));
  if (c.pp > 1 && !schedule_admits_compile(p.job, c.schedule))
    e.push_back(make_error(w, "--schedule", "dualpipev",
                           "torch.distributed.pipelining's ScheduleDualPipeV refuses torch.compile'd stages" + by,
                           "pass --torch-compile off with --schedule dualpipev, or use 1f1b or interleaved"));
  // Multi-token prediction is Megatron-Core's module (core/mtp_config.h).
  for (Error& x : validate_mtp_job(p.model, p.job, w)) e.push_back(std::move(x));
  return e;
}

FrameworkKnobs framework_knobs(const FrameworkSpec& f) {
  FrameworkKnobs k;
  if (auto a = parse_attention(f.attention)) k.attention = *a;
  // Megatron-Core / NeMo attend through Transformer Engine, which picks cuDNN's fused attention on
  // Hopper (framework_knobs.h); the others run FlashAttention-2 (SDPA's flash backend, flash_attn).
  if (f.id == Framework::Megatron || f.id == Framework::Nemo) {
    k.fused_kernel = FusedAttentionKernel::Cudnn;
    k.megatron_core_model_code = true;  // costmodel/megatron_eager_ops.h
  }
  // The loss: Megatron-LM's --cross-entropy-loss-fusion is off by default ([M] arguments.py,
  // action='store_true'); NeMo 2.0's GPTConfig sets cross_entropy_loss_fusion = True.
  if (f.id == Framework::Megatron) k.cross_entropy = CrossEntropyKernel::Unfused;
  if (f.id == Framework::Nemo) k.cross_entropy = CrossEntropyKernel::Fused;
  // torchtitan computes the loss with PyTorch's cross entropy on fp32 logits (costmodel/cross_entropy.h).
  if (f.id == Framework::Torchtitan) k.cross_entropy = CrossEntropyKernel::TorchFp32;
  // PyTorch FSDP jobs step torch.optim.AdamW as PyTorch builds it by default, its foreach kernels
  // (core/framework_knobs.h foreach_adamw), and clip through FSDP's clip_grad_norm_.
  if (f.id == Framework::Fsdp) k.foreach_adamw = true;
  if (f.id == Framework::DeepSpeed) {
    k.sharding.granularity = ShardGranularity::Buckets;
    // The spec's buckets are bytes of bf16 elements (2 bytes each); the knobs count elements.
    if (f.zero3_prefetch_bytes > 0) k.sharding.prefetch_bucket_elements = f.zero3_prefetch_bytes / 2.0;
    if (f.dp_bucket_bytes > 0) k.sharding.reduce_bucket_elements = f.dp_bucket_bytes / 2.0;
  }
  // torchtitan runs eager unless compile is asked for ([T] job_config.py Compile.enable = False), with
  // FSDP2, its own RoPE / repeat_kv code and foreach AdamW (costmodel/README.md "torchtitan's own code").
  if (f.id == Framework::Torchtitan) {
    k.torch_grouped_mm = true;  // [T] models/moe GroupedExperts: torch._grouped_mm over the local experts
    k.torch_compile = false;
    k.sharding.fsdp2_copies = true;
    k.sharding.pipeline_keeps_unsharded = true;
    k.torchtitan_attention_inputs = true;
    k.foreach_adamw = true;
    k.fp8_saves_quantized_inputs = false;  // torchao Float8Linear keeps the 16-bit inputs
  }
  return k;
}

}  // namespace meshplan
