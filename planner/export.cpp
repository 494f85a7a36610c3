// Megatron-LM arguments and DeepSpeed ds_config.json for one configuration, as plain text.
#include "planner/export.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace meshplan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// One "--flag value" line of the bash array (value may be empty for switches).
struct ArgList {
  std::ostringstream out;
  void arg(const std::string& flag, const std::string& value = "") {
    out << "  " << flag << (value.empty() ? "" : " " + value) << "\n";
  }
  void note(const std::string& text) { out << "  # " << text << "\n"; }
};

void parallel_args(const Problem& p, const ParallelConfig& c, ArgList& a) {
  a.arg("--tensor-model-parallel-size", str(c.tp));
  a.arg("--pipeline-model-parallel-size", str(c.pp));
  if (c.schedule == ScheduleKind::Interleaved)
    a.arg("--num-layers-per-virtual-pipeline-stage",
          str(p.model.num_layers / (static_cast<int64_t>(c.pp) * c.virtual_stages)));
  if (c.schedule == ScheduleKind::GPipe && c.pp > 1)
    a.note("GPipe has no Megatron-LM flag: Megatron runs 1F1B (same bubble, less activation memory)");
  if (c.schedule == ScheduleKind::ZeroBubbleH1 && c.pp > 1)
    a.note("ZB-H1 (zero-bubble) has no Megatron-LM flag: this runs 1F1B; the plan assumed ZB-H1");
  const int64_t chunks = static_cast<int64_t>(c.pp) * c.virtual_stages;
  if (c.pp > 1 && p.model.num_layers % chunks != 0)
    a.note("uneven split: " + str(p.model.num_layers) + " layers over " + str(chunks) +
           " chunks (meshplan puts the extra layers in the middle chunks; Megatron-LM can only "
           "make the first/last stage different: --decoder-first/last-pipeline-num-layers)");
  if (c.sequence_parallel) a.arg("--sequence-parallel");
  a.arg("--micro-batch-size", str(c.micro_batch_size));
  a.arg("--global-batch-size", str(p.job.global_batch));
}

void memory_args(const ParallelConfig& c, ArgList& a) {
  if (c.recompute == Recompute::Selective) a.arg("--recompute-granularity", "selective");
  if (c.recompute == Recompute::Full) {
    a.arg("--recompute-granularity", "full");
    a.arg("--recompute-method", "uniform");
    a.arg("--recompute-num-layers", "1");
  }
  if (c.zero_stage >= 1) a.arg("--use-distributed-optimizer");
  if (c.zero_stage == 3)
    a.note("ZeRO-3 (parameter sharding): the distributed optimizer shards optimizer state and "
           "gradients only; use Megatron FSDP or DeepSpeed (--export deepspeed) to shard weights");
  if (c.dp_overlap && c.dp > 1) {
    a.arg("--overlap-grad-reduce");
    if (c.zero_stage >= 1) a.arg("--overlap-param-gather");
  }
}

void precision_args(const Problem& p, ArgList& a) {
  if (p.job.dtype == "bf16") a.arg("--bf16");
  else if (p.job.dtype == "fp16") a.arg("--fp16");
  else a.note("compute dtype " + p.job.dtype + " has no single Megatron-LM flag");
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
  if (!m.biases) a.arg("--disable-bias-linear");
  if (!m.biases) a.arg("--normalization", "RMSNorm");
  if (!m.tie_word_embeddings) a.arg("--untie-embeddings-and-output-weights");
  a.note("vocabulary " + str(m.vocab_size) + ": set by your tokenizer arguments");
}

std::string boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string megatron_args(const Problem& p, const ParallelConfig& c) {
  ArgList a;
  parallel_args(p, c, a);
  memory_args(c, a);
  precision_args(p, a);
  model_args(p, a);
  std::ostringstream out;
  out << "# Megatron-LM arguments from meshplan plan: " << p.model.name << " on " << p.job.gpus
      << " x " << p.hardware.name << " (tp=" << c.tp << " pp=" << c.pp << " dp=" << c.dp
      << ", zero " << c.zero_stage << ", " << to_string(c.schedule) << ").\n"
      << "# Launch on " << p.job.gpus << " GPUs: torchrun ... pretrain_gpt.py \"${MEGATRON_ARGS[@]}\""
      << " <data, tokenizer, optimizer arguments>\n"
      << "MEGATRON_ARGS=(\n" << a.out.str() << ")\n";
  return out.str();
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
    << "    \"reduce_scatter\": true";
  if (c.zero_stage == 3) o << ",\n    \"stage3_gather_16bit_weights_on_model_save\": true";
  o << "\n  },\n";
  if (c.recompute != Recompute::None)
    o << "  \"activation_checkpointing\": {\n"
      << "    \"partition_activations\": " << boolean(c.sequence_parallel) << ",\n"
      << "    \"contiguous_memory_optimization\": false,\n"
      << "    \"cpu_checkpointing\": false\n"
      << "  },\n";
  o << "  \"gradient_clipping\": 1.0,\n"
    << "  \"steps_per_print\": 10,\n"
    << "  \"wall_clock_breakdown\": false\n"
    << "}\n";
  return o.str();
}

}  // namespace meshplan
