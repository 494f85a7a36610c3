// Megatron-LM arguments and DeepSpeed ds_config.json for one configuration, as plain text.
#include "planner/export.h"

#include "core/hsdp_config.h"
#include "core/job_features.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "planner/compression_export.h"

#include "core/framework.h"
#include "costmodel/context_parallel.h"
#include "costmodel/fp8_params.h"
#include "core/framework_knobs.h"
#include "core/megatron_overlap.h"
#include "core/recompute_modules.h"
#include "planner/cuda_graph_export.h"
#include "planner/moe_export.h"
#include "planner/mtp_export.h"

namespace meshplan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// DeepSpeed's bucket defaults in elements, from the one definition the cost model uses too
// (ShardingKnobs, core/framework_knobs.h, which cites deepspeed/runtime/zero/config.py).
// allgather_bucket_size defaults to the same pp_int(5e8) as reduce_bucket_size (same file).
int64_t deepspeed_reduce_bucket_elements() {
  return static_cast<int64_t>(ShardingKnobs{}.reduce_bucket_elements);
}
int64_t deepspeed_prefetch_bucket_elements() {
  return static_cast<int64_t>(ShardingKnobs{}.prefetch_bucket_elements);
}

// One "--flag value" line of the bash array (value may be empty for switches).
struct ArgList {
  std::ostringstream out;
  void arg(const std::string& flag, const std::string& value = "") {
    out << "  " << flag << (value.empty() ? "" : " " + value) << "\n";
  }
  void note(const std::string& text) { out << "  # " << text << "\n"; }
};

// Megatron's --pipeline-model-parallel-layout for our split: stages in model order (chunk c on
// pipeline rank c % pp, as Megatron's layout), "E" on the first, "L" on the last, "t*n" layers, and the
// MTP modules as "m" before the loss (costmodel/mtp.h: all on the last chunk; with a custom layout
// Megatron-Core builds only the "m" layers the layout names, multi_token_prediction.py).
std::string pipeline_layout(const std::vector<int>& chunks, int64_t mtp_layers) {
  std::string s;
  for (size_t c = 0; c < chunks.size(); ++c) {
    if (c) s += "|";
    if (c == 0) s += "E";
    // A chunk without layers (0 first or last: the embedding or the loss alone, Megatron's
    // account_for_*_in_pipeline_split) is the bare "E" or "L" Megatron's layout parser takes.
    if (chunks[c] > 0) s += "t*" + str(chunks[c]);
    if (c + 1 == chunks.size()) s += std::string(static_cast<size_t>(std::max<int64_t>(0, mtp_layers)), 'm') + "L";
  }
  return s;
}

bool even_split(const Problem& p, const ParallelConfig& c) {
  const std::vector<int> chunks = layers_per_chunk(p.model, c);
  return std::all_of(chunks.begin(), chunks.end(), [&](int n) { return n == chunks.front(); });
}

void parallel_args(const Problem& p, const ParallelConfig& c, ArgList& a) {
  a.arg("--tensor-model-parallel-size", str(c.tp));
  a.arg("--pipeline-model-parallel-size", str(c.pp));
  if (c.cp > 1) {
    a.arg("--context-parallel-size", str(c.cp));
    a.arg("--cp-comm-type", to_string(p.job.cp_comm));  // p2p | all_gather | a2a, as costed
  }
  if (c.pp > 1 && !even_split(p, c)) {
    // validate_args rejects layers not divisible by pp (or by pp*v); a layout states our split.
    a.arg("--pipeline-model-parallel-layout", "\"" + pipeline_layout(layers_per_chunk(p.model, c), p.model.mtp_layers) + "\"");
  } else if (c.schedule == ScheduleKind::Interleaved) {
    a.arg("--num-layers-per-virtual-pipeline-stage",
          str(p.model.num_layers / (static_cast<int64_t>(c.pp) * c.virtual_stages)));
  }
  if (c.sequence_parallel) a.arg("--sequence-parallel");
  // Transformer Engine's userbuffers overlap, as costed (costmodel/tp_overlap.h): only where Megatron
  // runs it, TP > 1 with sequence parallelism (core/megatron_overlap.h).
  if (tp_comm_overlap_on(p.job, c)) a.arg("--tp-comm-overlap");
  a.arg("--micro-batch-size", str(c.micro_batch_size));
  a.arg("--global-batch-size", str(p.job.global_batch));
}

void memory_args(const Problem& p, const ParallelConfig& c, ArgList& a) {
  if (c.recompute == Recompute::Selective) a.arg("--recompute-granularity", "selective");
  // Megatron-Core's recompute modules (core/recompute_modules.h), as costed; list fields of its
  // TransformerConfig take space-separated values (megatron/training/argument_utils.py, nargs "+").
  if (c.recompute == Recompute::Selective && p.job.knobs.recompute_modules != 0)
    a.arg("--recompute-modules", recompute_modules_text(p.job.knobs.recompute_modules, " "));
  if (c.recompute == Recompute::Full) {
    a.arg("--recompute-granularity", "full");
    a.arg("--recompute-method", "uniform");
    a.arg("--recompute-num-layers", "1");
  }
  if (c.zero_stage >= 1) a.arg("--use-distributed-optimizer");  // ZeRO-1: fp32 master + Adam over DP
  // ZeRO-2/3: Megatron-FSDP, which also shards the gradients (and the weights), per TransformerLayer
  // unit; it needs the fsdp_dtensor checkpoint format ([M] megatron/training/arguments.py).
  if (c.zero_stage >= 2) {
    a.arg("--use-megatron-fsdp");
    a.arg("--data-parallel-sharding-strategy", c.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    a.arg("--ckpt-format", "fsdp_dtensor");
  }
  // HSDP: the partial distributed optimizer, dp / shard_group instances (costmodel/hsdp.h).
  if (hsdp_enabled(c)) a.arg("--num-distributed-optimizer-instances", std::to_string(c.dp / c.shard_group));
  if (c.dp_overlap && grad_group_size(c) > 1) {  // gradients reduce over DP x CP ranks (costmodel)
    a.arg("--overlap-grad-reduce");
    // Only when the job asked for it: the estimate costs the post-step weight gather exposed otherwise
    // (costmodel/step.cpp), and the script must run what was costed.
    if (param_gather_overlap_on(p.job, c)) a.arg("--overlap-param-gather");
    // The bucket size the edge bucket was costed with (costmodel/ddp_edge_bucket.h), when the job set one.
    if (const double b = p.job.knobs.ddp_bucket_params; b > 0)
      a.arg("--ddp-bucket-size", std::to_string(static_cast<int64_t>(b)));
  }
}

// Megatron-Core's activation offloading, as Megatron-Bridge's presets set it (activations, not weights).
void offload_args(const Problem& p, ArgList& a) {
  const int n = p.job.knobs.activation_offload_layers;
  if (n <= 0) return;
  a.arg("--cpu-offloading");
  a.arg("--cpu-offloading-num-layers", str(n));
}

void precision_args(const Problem& p, ArgList& a) {
  a.arg(p.job.dtype == "fp16" ? "--fp16" : "--bf16");  // dtype checked by megatron_args
  a.arg("--main-grads-dtype", "fp32");  // Megatron's default, stated: the cost counts 4-byte grads
  // Megatron-Core's precision-aware optimizer (core/optimizer_states.h), as costed.
  if (const OptimizerStates& s = p.job.knobs.optimizer_states; s.precision_aware) {
    a.arg("--use-precision-aware-optimizer");
    a.arg("--main-params-dtype", to_string(s.main_params));
    a.arg("--exp-avg-dtype", to_string(s.exp_avg));
    a.arg("--exp-avg-sq-dtype", to_string(s.exp_avg_sq));
  }
  if (p.job.fp8 != Fp8Recipe::None) {
    // E4M3 forward, E5M2 gradients (TE Format.HYBRID). Megatron's --fp8-recipe names current
    // scaling "tensorwise"; delayed scaling is costed with TE's 1024-entry amax history (Megatron's
    // own default is 1), so that is written out.
    a.arg("--fp8-format", "hybrid");
    a.arg("--fp8-recipe", p.job.fp8 == Fp8Recipe::Current ? "tensorwise" : to_string(p.job.fp8));
    if (p.job.fp8 == Fp8Recipe::Delayed) {
      a.arg("--fp8-amax-history-len", "1024");
      a.arg("--fp8-amax-compute-algo", "max");
    }
    // FP8 primary weights (costmodel/fp8_params.h); MXFP8 needs the 16-bit gather into the grad buffer.
    if (fp8_primary_weights(p)) {
      a.arg("--fp8-param-gather");
      if (p.job.fp8 == Fp8Recipe::Mxfp8) a.arg("--reuse-grad-buf-for-mxfp8-param-ag");
    }
    // FP8 fused attention (costmodel/fp8_attention.h).
    if (p.job.knobs.fp8_attention) a.arg("--fp8-dot-product-attention");
  }
  // Costed with the jit-fused loss (costmodel/cross_entropy.h): Megatron runs it only when asked.
  if (p.job.knobs.cross_entropy == CrossEntropyKernel::Fused) a.arg("--cross-entropy-loss-fusion");
  // The cost counts dropout masks exactly when the model trains with dropout; Megatron's default is
  // 0.1 for both (transformer_config.py), so it is always written out.
  const char* drop = p.model.dropout ? "0.1" : "0.0";
  a.arg("--hidden-dropout", drop);
  a.arg("--attention-dropout", drop);
}

void model_args(const Problem& p, ArgList& a) {
  const ModelSpec& m = p.model;
  a.arg("--num-layers", str(m.num_layers));
  a.arg("--hidden-size", str(m.hidden_size));
  a.arg("--num-attention-heads", str(m.num_heads));
  if (m.num_kv_heads != m.num_heads) {
    a.arg("--group-query-attention");
    a.arg("--num-query-groups", str(m.num_kv_heads));
  }
  a.arg("--ffn-hidden-size", str(m.intermediate_size));
  a.arg("--seq-length", str(p.job.seq_len));
  a.arg("--max-position-embeddings", str(std::max<int64_t>(p.job.seq_len, m.max_position_embeddings)));
  if (m.mlp == MlpKind::Gated) a.arg("--swiglu");
  if (!m.learned_positions) a.arg("--position-embedding-type", "rope");
  // --rotary-base is an int in Megatron's arguments.py (default 10000).
  if (!m.learned_positions && m.rope_theta > 0) a.arg("--rotary-base", str(std::llround(m.rope_theta)));
  if (!m.biases) a.arg("--disable-bias-linear");
  if (!m.biases) a.arg("--normalization", "RMSNorm");
  if (!m.tie_word_embeddings) a.arg("--untie-embeddings-and-output-weights");
  a.note("vocabulary " + str(m.vocab_size) + ": set by your tokenizer arguments");
}

void moe_args(const Problem& p, const ParallelConfig& c, ArgList& a) {  // planner/moe_export.h
  for (const auto& [flag, value] : megatron_moe_flags(p, c)) a.arg(flag, value);
  for (const auto& [flag, value] : megatron_mtp_flags(p)) a.arg(flag, value);  // planner/mtp_export.h
  for (const auto& [flag, value] : megatron_cuda_graph_flags(p, c)) a.arg(flag, value);  // planner/cuda_graph_export.h
}

std::string boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

Result<bool> check_megatron(const Problem& p, const ParallelConfig& c) {
  Problem mp = p;
  mp.job.framework = Framework::Megatron;
  ErrorList e = validate_framework(mp, c, "--export megatron");
  if (!e.empty()) return e.front();
  if (p.job.dtype != "bf16" && p.job.dtype != "fp16")
    return make_error("--export megatron", "--dtype", p.job.dtype, "has no Megatron-LM precision flag",
                      "plan with --dtype bf16 or fp16");
  if (c.cp > 1 && p.job.cp_comm == CpComm::TorchAllGather)  // --cp-comm-type takes p2p | all_gather | a2a
    return make_error("--export megatron", "--cp-comm", to_string(p.job.cp_comm),
                      "is PyTorch's context_parallel, which Megatron-LM does not run",
                      "plan with --cp-comm p2p, all_gather or a2a");
  return true;
}

std::string megatron_args(const Problem& p, const ParallelConfig& c) {
  ArgList a;
  parallel_args(p, c, a);
  memory_args(p, c, a);
  offload_args(p, a);
  precision_args(p, a);
  model_args(p, a);
  moe_args(p, c, a);
  std::ostringstream out;
  out << "# Megatron-LM arguments from meshplan plan: " << p.model.name << " on " << p.job.gpus
      << " x " << p.hardware.name << " (tp=" << c.tp << " pp=" << c.pp << " dp=" << c.dp
      << ", zero " << c.zero_stage << ", " << to_string(c.schedule) << ").\n"
      << "# Launch on " << p.job.gpus << " GPUs: torchrun ... pretrain_gpt.py \"${MEGATRON_ARGS[@]}\""
      << " <data, tokenizer, optimizer arguments>\n"
      << "MEGATRON_ARGS=(\n" << a.out.str() << ")\n";
  return out.str();
}

Result<std::string> megatron_export(const Problem& p, const ParallelConfig& c) {
  if (auto r = check_megatron(p, c); !r) return r.error();
  return megatron_args(p, c);
}

std::string deepspeed_config_json(const Problem& p, const ParallelConfig& c) {
  const bool bf16 = p.job.dtype == "bf16";
  const bool fp16 = p.job.dtype == "fp16";
  std::ostringstream o;
  // DeepSpeed checks train_batch_size == micro x accumulation x data-parallel world size.
  o << "{\n"
    << "  \"train_batch_size\": " << c.micro_batch_size * c.num_micro_batches * c.dp << ",\n"
    << "  \"train_micro_batch_size_per_gpu\": " << c.micro_batch_size << ",\n"
    << "  \"gradient_accumulation_steps\": " << c.num_micro_batches << ",\n"
    << "  \"bf16\": {\"enabled\": " << boolean(bf16) << "},\n"
    << "  \"fp16\": {\"enabled\": " << boolean(fp16) << (fp16 ? ", \"loss_scale\": 0" : "") << "},\n"
    << "  \"zero_optimization\": {\n"
    << "    \"stage\": " << c.zero_stage << ",\n"
    << "    \"overlap_comm\": " << boolean(c.dp_overlap) << ",\n"
    << "    \"contiguous_gradients\": true,\n"
    << "    \"reduce_scatter\": true,\n"
    << "    \"reduce_bucket_size\": " << deepspeed_reduce_bucket_elements() << ",\n"
    << "    \"allgather_bucket_size\": " << deepspeed_reduce_bucket_elements();
  if (c.zero_stage == 3)
    o << ",\n    \"stage3_prefetch_bucket_size\": " << deepspeed_prefetch_bucket_elements()
      << ",\n    \"stage3_gather_16bit_weights_on_model_save\": true";
  o << "\n  },\n";
  // The cost counts gradients in the compute dtype (DeepSpeed's default): stated, not implied.
  o << "  \"data_types\": {\"grad_accum_dtype\": \"" << (fp16 ? "fp16" : bf16 ? "bf16" : "fp32") << "\"},\n";
  if (c.recompute != Recompute::None)
    o << "  \"activation_checkpointing\": {\n"
      << "    \"partition_activations\": " << boolean(c.sequence_parallel) << ",\n"
      << "    \"contiguous_memory_optimization\": false,\n"
      << "    \"cpu_checkpointing\": false\n"
      << "  },\n";
  o << deepspeed_compression_json(p);  // 1-bit Adam / LAMB optimizer block (planner/compression_export.h)
  o << "  \"gradient_clipping\": 1.0,\n"
    << "  \"steps_per_print\": 10,\n"
    << "  \"wall_clock_breakdown\": false\n"
    << "}\n";
  return o.str();
}

}  // namespace meshplan
