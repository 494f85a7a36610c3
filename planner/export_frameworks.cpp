// torchtitan TOML, NeMo YAML and the checked dispatcher over every framework export.
// Key names: torchtitan/config/job_config.py at pytorch/torchtitan 238fa99 (last TOML release
// layout); NeMo examples/nlp/language_modeling/conf/megatron_gpt_config.yaml (model.* keys are
// Megatron Core TransformerConfig fields).
#include "planner/export_frameworks.h"

#include <cmath>
#include <sstream>
#include <tuple>

#include "core/framework.h"
#include "core/hsdp_config.h"
#include "core/megatron_overlap.h"
#include "core/recompute_modules.h"
#include "planner/cuda_graph_export.h"
#include "costmodel/fp8_params.h"
#include "planner/compression_export.h"
#include "planner/export.h"
#include "planner/moe_export.h"
#include "planner/mtp_export.h"

namespace meshplan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }
std::string boolean(bool b) { return b ? "true" : "false"; }

int64_t nodes_of(const Problem& p) {
  const int64_t per = std::max<int64_t>(1, p.hardware.gpus_per_node);
  return (p.job.gpus + per - 1) / per;
}

const char* torchtitan_schedule(const ParallelConfig& c) {
  switch (c.schedule) {
    case ScheduleKind::GPipe: return "GPipe";
    case ScheduleKind::Interleaved: return "Interleaved1F1B";
    case ScheduleKind::DualPipeV: return "DualPipeV";  // torchtitan places its 2 pp stages in a V
    default: return "1F1B";
  }
}

// The model shape the cost assumed, for formats whose model comes from code (torchtitan flavors).
std::string model_comment(const Problem& p) {
  const ModelSpec& m = p.model;
  std::ostringstream o;
  o << "# model the cost assumed: layers " << m.num_layers << ", hidden " << m.hidden_size << ", heads "
    << m.num_heads << ", kv heads " << m.num_kv_heads << (m.num_kv_heads < m.num_heads ? " (GQA)" : "")
    << ", ffn " << m.intermediate_size
    << (m.mlp == MlpKind::Gated ? " SwiGLU" : " GELU") << ", vocab " << m.vocab_size
    << (m.dropout ? ", dropout on" : ", no dropout")
    << (m.rope_theta > 0 ? ", rope_theta " + std::to_string(std::llround(m.rope_theta)) : std::string())
    << (m.tie_word_embeddings ? ", tied embeddings" : ", untied embeddings") << "\n";
  return o.str();
}

}  // namespace

std::string torchtitan_toml(const Problem& p, const ParallelConfig& c, bool fsdp_only) {
  std::ostringstream o;
  o << "# torchtitan job config from meshplan plan: " << p.model.name << " on " << p.job.gpus << " x "
    << p.hardware.name << " (tp=" << c.tp << " pp=" << c.pp << " dp=" << c.dp << ", zero "
    << c.zero_stage << ").\n";
  if (fsdp_only)
    o << "# PyTorch FSDP through torchtitan's FSDP2 trainer: zero 3 = FULL_SHARD (reshard always),\n"
      << "# zero 2 = SHARD_GRAD_OP (reshard never), zero 0 = NO_SHARD (replicate, DDP); a shard group\n"
      << "# (HSDP) = HYBRID_SHARD: data_parallel_shard_degree ranks shard, data_parallel_replicate_degree replicate.\n";
  o << "# Launch: torchrun --nproc_per_node " << std::min<int64_t>(p.job.gpus, p.hardware.gpus_per_node)
    << " --nnodes " << nodes_of(p) << " -m torchtitan.train --job.config_file <this file>\n";
  o << model_comment(p);
  o << "\n[job]\ndescription = \"" << p.model.name << " (meshplan)\"\n";
  o << "\n[training]\n"
    // torchtitan/train.py: accumulation steps = global / (local x DP); with PP, local is one
    // pipeline step's batch, cut into micro-batches of pipeline_parallel_microbatch_size.
    << "local_batch_size = " << (c.pp > 1 ? c.micro_batch_size * c.num_micro_batches : c.micro_batch_size) << "\n"
    << "global_batch_size = " << p.job.global_batch << "\n"
    << "seq_len = " << p.job.seq_len << "\n"
    << "mixed_precision_param = \"" << (p.job.dtype == "fp32" ? "float32" : "bfloat16") << "\"\n"
    << "mixed_precision_reduce = \"float32\"\n";
  const bool shard = c.zero_stage >= 2;
  // HSDP (costmodel/hsdp.h): torchtitan's dp_replicate x dp_shard mesh, shard groups inside replicas.
  const int shard_degree = !shard ? 1 : hsdp_enabled(c) ? c.shard_group : c.dp;
  o << "\n[parallelism]\n"
    << "data_parallel_replicate_degree = " << c.dp / shard_degree << "\n"
    << "data_parallel_shard_degree = " << shard_degree << "\n";
  // With PP, torchtitan's "default" keeps every stage gathered all step (no per-micro-batch
  // all-gathers), which is what meshplan costs there (costmodel/fsdp2_pipeline.h): say "never".
  if (shard)
    o << "fsdp_reshard_after_forward = \"" << (c.zero_stage == 3 && c.pp == 1 ? "always" : "never") << "\"\n";
  o << "tensor_parallel_degree = " << c.tp << "\n"
    << "pipeline_parallel_degree = " << c.pp << "\n"
    << "context_parallel_degree = 1\n"
    << torchtitan_moe_keys(p, c);
  if (c.pp > 1) {
    const int64_t chunk = p.model.num_layers / (static_cast<int64_t>(c.pp) * c.virtual_stages);
    o << "pipeline_parallel_schedule = \"" << torchtitan_schedule(c) << "\"\n"
      << "pipeline_parallel_microbatch_size = " << c.micro_batch_size << "\n"
      << "pipeline_parallel_layers_per_stage = " << chunk << "\n"
      << "pipeline_parallel_first_stage_less_layers = 0\n"
      << "pipeline_parallel_last_stage_less_layers = 0\n";
  }
  o << "\n[activation_checkpoint]\n";
  const AcPolicy& ac = p.job.ac_policy;
  if (c.recompute == Recompute::Full && ac.kind == AcPolicyKind::EveryNLayers && ac.every_n_layers > 1) {
    // torchtitan's layer SAC: selective_ac_option "N" checkpoints every N-th block (core/ac_policy.h).
    o << "mode = \"selective\"\n"
      << "selective_ac_option = \"" << ac.every_n_layers << "\"\n";
  } else {
    o << "mode = \"" << to_string(c.recompute) << "\"\n";
    if (c.recompute == Recompute::Selective) o << "selective_ac_option = \"op\"\n";
  }
  // Costed with fused element-wise kernels (FrameworkKnobs::torch_compile): torchtitan must compile
  // its blocks to run that; its default (compile.enable = false) is the eager cost.
  if (p.job.knobs.torch_compile) o << "\n[compile]\nenable = true\n";
  // torchao float8 of the linear layers (job_config.py Model.converters, Float8Linear.recipe_name):
  // tensorwise is what --fp8 current costs; rowwise is costmodel/fp8_rowwise.h. validate_framework
  // refuses the Transformer Engine recipes under torchtitan.
  if (p.job.fp8 == Fp8Recipe::Current || p.job.fp8 == Fp8Recipe::Rowwise)
    o << "\n[model]\nconverters = [\"quantize.linear.float8\"]\n"
      << "\n[quantize.linear.float8]\nrecipe_name = \"" << (p.job.fp8 == Fp8Recipe::Rowwise ? "rowwise" : "tensorwise")
      << "\"\n";
  return o.str();
}

// Megatron-Core's loss keys, where the costed kernel is not NeMo's default (fused: GPTConfig's
// cross_entropy_loss_fusion True with the native implementation).
static std::string nemo_cross_entropy_keys(const Problem& p) {
  switch (p.job.knobs.cross_entropy) {
    case CrossEntropyKernel::Te:
    case CrossEntropyKernel::TeInplace:
      return "  cross_entropy_loss_fusion: true\n  cross_entropy_fusion_impl: te\n";
    case CrossEntropyKernel::Unfused: return "  cross_entropy_loss_fusion: false\n";
    default: return "";
  }
}

std::string nemo_yaml(const Problem& p, const ParallelConfig& c) {
  const ModelSpec& m = p.model;
  std::ostringstream o;
  o << "# NeMo (Megatron Core) config from meshplan plan: " << m.name << " on " << p.job.gpus << " x "
    << p.hardware.name << " (tp=" << c.tp << " pp=" << c.pp << " dp=" << c.dp << ", zero "
    << c.zero_stage << ", " << to_string(c.schedule) << ").\n"
    << "# Merge into megatron_gpt_config.yaml (these keys override it).\n";
  o << "trainer:\n"
    << "  devices: " << std::min<int64_t>(p.job.gpus, p.hardware.gpus_per_node) << "\n"
    << "  num_nodes: " << nodes_of(p) << "\n"
    << "  precision: " << (p.job.dtype == "fp16" ? "16-mixed" : "bf16-mixed") << "\n"
    << "model:\n"
    << "  micro_batch_size: " << c.micro_batch_size << "\n"
    << "  global_batch_size: " << p.job.global_batch << "\n"
    << "  tensor_model_parallel_size: " << c.tp << "\n"
    << "  pipeline_model_parallel_size: " << c.pp << "\n"
    << "  virtual_pipeline_model_parallel_size: "
    << (c.schedule == ScheduleKind::Interleaved ? str(c.virtual_stages) : "null") << "\n"
    << "  sequence_parallel: " << boolean(c.sequence_parallel) << "\n"
    << "  encoder_seq_length: " << p.job.seq_len << "\n"
    << "  max_position_embeddings: " << std::max<int64_t>(p.job.seq_len, m.max_position_embeddings) << "\n"
    << "  num_layers: " << m.num_layers << "\n"
    << "  hidden_size: " << m.hidden_size << "\n"
    << "  ffn_hidden_size: " << m.intermediate_size << "\n"
    << "  num_attention_heads: " << m.num_heads << "\n"
    << "  num_query_groups: " << (m.num_kv_heads != m.num_heads ? str(m.num_kv_heads) : "null") << "\n"
    << "  hidden_dropout: " << (m.dropout ? "0.1" : "0.0") << "\n"
    << "  attention_dropout: " << (m.dropout ? "0.1" : "0.0") << "\n"
    << "  ffn_dropout: 0.0\n"
    << "  position_embedding_type: " << (m.learned_positions ? "learned_absolute" : "rope") << "\n";
  if (!m.learned_positions && m.rope_theta > 0) o << "  rotary_base: " << std::llround(m.rope_theta) << "\n";
  o
    << "  normalization: " << (m.biases ? "layernorm" : "rmsnorm") << "\n"
    << "  bias: " << boolean(m.biases) << "\n"
    << "  activation: " << (m.mlp == MlpKind::Gated ? "fast-swiglu" : "gelu") << "\n"
    << "  share_embeddings_and_output_weights: " << boolean(m.tie_word_embeddings) << "\n"
    << "  megatron_amp_O2: true\n"
    << nemo_cross_entropy_keys(p)
    << nemo_moe_keys(p, c) << nemo_mtp_keys(p) << nemo_cuda_graph_keys(p);
  if (c.recompute == Recompute::None) {
    o << "  activations_checkpoint_granularity: null\n";
  } else if (c.recompute == Recompute::Selective) {
    o << "  activations_checkpoint_granularity: selective\n";
    // Megatron-Core's TransformerConfig field, as mtp_num_layers (planner/mtp_export.h) is passed on.
    if (p.job.knobs.recompute_modules != 0)
      o << "  recompute_modules: [" << recompute_modules_text(p.job.knobs.recompute_modules, ", ") << "]\n";
  } else {
    o << "  activations_checkpoint_granularity: full\n"
      << "  activations_checkpoint_method: uniform\n"
      << "  activations_checkpoint_num_layers: 1\n";
  }
  if (const int n = p.job.knobs.activation_offload_layers; n > 0)
    o << "  cpu_offloading: true\n  cpu_offloading_num_layers: " << n
      << "\n  cpu_offloading_activations: true\n  cpu_offloading_weights: false\n";
  // Transformer Engine's userbuffers TP overlap, where Megatron-Core runs it (core/megatron_overlap.h).
  if (tp_comm_overlap_on(p.job, c)) o << "  ub_tp_comm_overlap: true\n";
  o << "  optim:\n"
    << "    name: " << (c.zero_stage >= 1 ? "distributed_fused_adam" : "fused_adam") << "\n";
  // Apex DistributedFusedAdam (NeMo's distributed_fused_adam): overlap_grad_sync defaults to true,
  // overlap_param_sync to false; state both where the plan differs from those defaults.
  if (c.zero_stage >= 1 && !c.dp_overlap) o << "    overlap_grad_sync: false\n";
  if (param_gather_overlap_on(p.job, c)) o << "    overlap_param_sync: true\n";
  return o.str();
}

bool is_framework_export(const std::string& kind) {
  return kind == "megatron" || kind == "deepspeed" || kind == "fsdp" || kind == "torchtitan" ||
         kind == "nemo";
}

Framework export_framework(const std::string& kind) { return *parse_framework(kind); }

Result<bool> check_framework_export(const std::string& kind, const Problem& p, const ParallelConfig& c) {
  Problem fp = p;
  fp.job.framework = export_framework(kind);
  const std::string where = "--export " + kind;
  ErrorList e = validate_framework(fp, c, where);
  if (!e.empty()) return e.front();
  if (p.job.dtype != "bf16" && p.job.dtype != "fp16" && p.job.dtype != "fp32")
    return make_error(where, "--dtype", p.job.dtype, "has no " + kind + " precision setting",
                      "plan with --dtype bf16");
  if (auto r = check_export_compression(kind, p); !r) return r.error();
  if (auto r = check_mtp_export(kind, p); !r) return r.error();  // planner/mtp_export.h
  if (auto r = check_cuda_graph_export(kind, p); !r) return r.error();  // planner/cuda_graph_export.h
  if (p.job.knobs.moe_dispatcher != MoeDispatcher::AllToAll && kind != "megatron" && kind != "nemo" && kind != "deepspeed")
    return make_error(where, "moe_dispatcher", to_string(p.job.knobs.moe_dispatcher),
                      "is Megatron-Core's flex dispatcher; " + kind + " has no such setting",
                      "plan with --moe-dispatcher alltoall, or export for megatron or nemo");
  if (p.job.knobs.recompute_modules != 0 && c.recompute == Recompute::Selective && kind != "megatron" && kind != "nemo")
    return make_error(where, "recompute_modules", recompute_modules_text(p.job.knobs.recompute_modules),
                      "are Megatron-Core's selective recompute modules; " + kind + " has no such setting",
                      "plan without --recompute-modules, or export for megatron or nemo");
  if (p.job.knobs.activation_offload_layers > 0 && kind != "megatron" && kind != "nemo")
    return make_error(where, "activation_offload_layers", str(p.job.knobs.activation_offload_layers),
                      "is Megatron-Core's CPU activation offloading; " + kind + " has no such setting",
                      "plan without --activation-offload-layers, or export for megatron or nemo");
  for (const auto& [on, key, flag] :
       {std::tuple{p.job.knobs.tp_comm_overlap, "tp_comm_overlap", "--tp-comm-overlap"},
        std::tuple{p.job.knobs.param_gather_overlap, "overlap_param_gather", "--overlap-param-gather"}})
    if (on && kind != "megatron" && kind != "nemo")
      return make_error(where, key, "true", std::string("is Megatron-Core's ") + flag + "; " + kind + " has no such setting",
                        std::string("plan without ") + flag + ", or export for megatron or nemo");
  // The NeMo YAML carries no FP8 keys: only the Megatron command line states FP8 primary weights.
  if (p.job.knobs.fp8_attention && p.job.fp8 != Fp8Recipe::None && kind != "megatron")
    return make_error(where, "fp8_attention", "true",
                      "is Megatron-Core's FP8 dot-product attention; the " + kind + " export does not state it",
                      "plan without --fp8-attention, or export for megatron (or slurm, torchrun)");
  if (fp8_primary_weights(p) && kind != "megatron")
    return make_error(where, "fp8_param_gather", "true",
                      "is Megatron-Core's FP8 primary weights; the " + kind + " export does not state it",
                      "plan without --fp8-param-gather, or export for megatron (or slurm, torchrun)");
  // Megatron-Core's precision-aware optimizer: only its command line states it (the NeMo YAML names Apex's
  // distributed_fused_adam, which has no per-moment dtypes).
  if (const OptimizerStates& s = p.job.knobs.optimizer_states; s.precision_aware && kind != "megatron")
    return make_error(where, "optimizer_states",
                      std::string(to_string(s.main_params)) + "/" + to_string(s.exp_avg) + "/" + to_string(s.exp_avg_sq),
                      "is Megatron-Core's precision-aware optimizer; the " + kind + " export does not state it",
                      "plan without the optimizer-state flags, or export for megatron (or slurm, torchrun)");
  // FSDP1's prefetch settings (Composer's, say): torchtitan's FSDP2 trainer, what the fsdp and torchtitan
  // exports run, prefetches one unit ahead in both passes, the default costing.
  const ShardingKnobs& k = p.job.knobs.sharding;
  if (!k.forward_prefetch)
    return make_error(where, "fsdp_forward_prefetch", "false",
                      "is FSDP1's forward_prefetch=False; torchtitan's FSDP2 trainer prefetches the next unit",
                      "plan without --fsdp-forward-prefetch off to export it");
  if (k.backward_prefetch != BackwardPrefetch::Pre)
    return make_error(where, "fsdp_backward_prefetch", to_string(k.backward_prefetch),
                      "is an FSDP1 backward_prefetch setting; torchtitan's FSDP2 trainer prefetches as BACKWARD_PRE",
                      "plan without --fsdp-backward-prefetch to export it");
  // fms-fsdp's eager model code (costmodel/fms_llama_ops.h) is not what the exported trainers run.
  if (p.job.knobs.fms_model_code)
    return make_error(where, "fsdp_model_code", "fms",
                      "is IBM's fms-fsdp model code; the " + kind + " export launches torchtitan's / the framework's own",
                      "plan without --fsdp-model-code fms to export it");
  // Transformer Engine's cross entropy (costmodel/cross_entropy.h): NeMo takes Megatron-Core's config keys;
  // Megatron-LM's own arguments reject --cross-entropy-fusion-impl te since its #5115 (2026-06-03,
  // megatron/training/arguments.py: "disabled due to stability issues"); the others have no such kernel.
  const CrossEntropyKernel ce = p.job.knobs.cross_entropy;
  if ((ce == CrossEntropyKernel::Te || ce == CrossEntropyKernel::TeInplace) && kind != "nemo")
    return make_error(where, "cross_entropy", to_string(ce),
                      kind == "megatron"
                          ? "is Transformer Engine's cross entropy, which Megatron-LM's arguments reject (its #5115)"
                          : "is Transformer Engine's cross entropy; " + kind + " has no such setting",
                      "plan with --cross-entropy fused, or export for nemo");
  // llm-foundry's loss and Composer's train metrics (costmodel/cross_entropy.h): no exported trainer runs them.
  if (ce == CrossEntropyKernel::FlashXentropy)
    return make_error(where, "cross_entropy", to_string(ce),
                      "is flash-attn's cross entropy (llm-foundry); the " + kind + " export launches its trainer's own loss",
                      "plan without --cross-entropy flash_xentropy to export it");
  if (p.job.knobs.train_metric_cross_entropies > 0)
    return make_error(where, "train_metric_cross_entropies", str(p.job.knobs.train_metric_cross_entropies),
                      "are Composer's train metrics; the " + kind + " export launches a trainer without them",
                      "plan without --train-metric-cross-entropies to export it");
  if (kind == "megatron") return check_megatron(p, c);
  if (kind == "deepspeed") return check_deepspeed_moe(p, c);
  return true;
}

Result<ExportText> export_for_framework(const std::string& kind, const Problem& p, const ParallelConfig& c) {
  if (auto r = check_framework_export(kind, p, c); !r) return r.error();
  ExportText out;
  if (kind == "megatron") {
    out.text = megatron_args(p, c);  // checked above (check_megatron)
  } else if (kind == "deepspeed") {
    out.text = deepspeed_config_json(p, c);
    if (static_cast<int64_t>(c.tp) * c.pp > 1)
      out.note = "deepspeed: tp*pp = " + str(static_cast<int64_t>(c.tp) * c.pp) +
                 " > 1: pass a Megatron mpu (deepspeed.initialize(..., mpu=mpu), e.g. "
                 "Megatron-DeepSpeed) or a PipelineModule with partition_method='uniform'; without it "
                 "DeepSpeed takes DP = world size and its batch check fails (train_batch_size " +
                 str(p.job.global_batch) + " needs DP = " + str(c.dp) + ")";
    const std::string moe = deepspeed_moe_note(p, c);
    if (!moe.empty()) out.note += (out.note.empty() ? "" : "; ") + moe;
  } else if (kind == "fsdp" || kind == "torchtitan") {
    out.text = torchtitan_toml(p, c, kind == "fsdp");
  } else {
    out.text = nemo_yaml(p, c);
  }
  return out;
}

}  // namespace meshplan
