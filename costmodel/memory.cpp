// Per-GPU memory by pipeline stage and the worst stage (costmodel/README.md "Memory").
#include "costmodel/memory.h"

#include <algorithm>

#include "core/pipeline_placement.h"
#include "costmodel/ac_policy.h"
#include "costmodel/activation_offload.h"
#include "costmodel/activations.h"
#include "costmodel/context_parallel.h"
#include "costmodel/expert_fsdp.h"
#include "costmodel/fp8.h"
#include "costmodel/fp8_params.h"
#include "costmodel/fsdp2_pipeline.h"
#include "costmodel/hsdp.h"
#include "costmodel/moe_cost.h"
#include "costmodel/moe_layout.h"
#include "costmodel/mtp.h"
#include "costmodel/pipeline.h"

namespace meshplan {

StaticBytes static_bytes(double parameters, ParamConvention c, int zero_stage, int dp) {
  return static_bytes(parameters, param_bytes(c), zero_stage, dp);
}

StaticBytes static_bytes(double parameters, const ParamBytes& pb, int zero_stage, int dp) {
  const double d = static_cast<double>(dp);
  StaticBytes s;
  s.weights = parameters * pb.weights / (zero_stage >= 3 ? d : 1.0);
  s.gradients = parameters * pb.gradients / (zero_stage >= 2 ? d : 1.0);
  s.optimizer = parameters * pb.optimizer / (zero_stage >= 1 ? d : 1.0);
  return s;
}

double layer_parameters_per_gpu(const ModelSpec& m, int tp) {
  const double norms = m.layer_norm_parameters();  // replicated on every TP rank
  // Routed experts are split by EP x ETP instead (costmodel/moe_layout.h); 0 for dense models.
  return (m.layer_parameters() - routed_parameters_per_layer(m) - norms) / tp + norms;
}

double embedding_parameters_per_gpu(const ModelSpec& m, int tp) {
  const double h = static_cast<double>(m.hidden_size);
  double params = static_cast<double>(m.vocab_size) * h / tp;  // vocab-parallel token embedding
  if (m.learned_positions) params += static_cast<double>(m.max_position_embeddings) * h;  // replicated
  return params;
}

double head_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg) {
  const double h = static_cast<double>(m.hidden_size);
  double params = (m.biases ? 2.0 : 1.0) * h;  // final norm
  if (!m.tie_word_embeddings || cfg.pp > 1) params += static_cast<double>(m.vocab_size) * h / cfg.tp;
  return params;
}

double chunk_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int chunk) {
  const int last = cfg.pp * std::max(1, cfg.virtual_stages) - 1;
  double params = chunk_layers(m, cfg, chunk) * layer_parameters_per_gpu(m, cfg.tp);
  if (chunk == 0) params += embedding_parameters_per_gpu(m, cfg.tp);
  if (chunk == last) params += head_parameters_per_gpu(m, cfg) + mtp_parameters_per_gpu(m, cfg, last_chunk_rank(cfg));
  return params;
}

double stage_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage) {
  double params = 0.0;
  for (int k = 0; k < std::max(1, cfg.virtual_stages); ++k)
    params += chunk_parameters_per_gpu(m, cfg, placed_chunk(cfg, stage, k));
  return params;
}

// FP8 weight copies of one layer on one GPU (TP-local linear weights, plus this rank's share of the
// routed experts, EP x ETP, on MoE layers).
static double fp8_layer_copy_bytes(const Problem& p, const ParallelConfig& cfg) {
  if (p.job.fp8 == Fp8Recipe::None) return 0.0;
  const double norms = p.model.layer_norm_parameters();
  const double linear = layer_parameters_per_gpu(p.model, cfg.tp) - norms + expert_layer_parameters_per_gpu(p.model, cfg);
  return linear * fp8_weight_bytes_per_param(p.job.fp8, fp8_gemm_needs_transposes(p.hardware));
}

double fp8_stage_bytes(const Problem& p, const ParallelConfig& cfg, int layers) {
  if (p.job.fp8 == Fp8Recipe::None) return 0.0;
  // ZeRO-3 keeps no whole layer between uses: the FP8 copy is cast from the gathered 16-bit layer and
  // freed with it, so only the current and the prefetched layer hold one (as the gathered 16-bit layers
  // counted with the activations). ZeRO 0-2 keep every layer's copy across the micro-batches.
  const double copies = cfg.zero_stage >= 3 ? std::min(layers, 2) : layers;
  return copies * fp8_layer_copy_bytes(p, cfg) + layers * fp8_scaling_state_bytes_per_layer(p.job.fp8);
}

static double stage_activation_bytes(const Problem& p, const ParallelConfig& cfg, int stage) {
  const ModelSpec& m = p.model;
  const double b = static_cast<double>(cfg.micro_batch_size);
  const double s = cp_local_seq(p, cfg);  // seq / cp
  const int t = cfg.tp;
  const bool sp = cfg.sequence_parallel;
  const double e = activation_element_bytes(p.job.dtype);
  const double in_flight = microbatches_in_flight(cfg.schedule, cfg.pp, cfg.virtual_stages,
                                                  cfg.num_micro_batches, stage);
  // Offloaded layers' activations wait in host memory (costmodel/activation_offload.h).
  // MTP modules' layers (last stage) stash like the stage's own layers (costmodel/mtp.h).
  const int layers = stage_layers(m, cfg, stage) + stage_mtp_layers(m, cfg, stage);
  double bytes = in_flight * offload_resident_layers(p, layers) * layer_activation_bytes_for(p, cfg);
  bytes += policy_working_bytes(p, cfg);  // costmodel/ac_policy.h
  if (stage == first_chunk_rank(cfg))
    bytes += first_chunk_in_flight(cfg.schedule, cfg.pp, cfg.virtual_stages, cfg.num_micro_batches) *
             embedding_activation_bytes(m, b, s, t, sp);
  // The LM head's logits live until that micro-batch's backward: one at a time on the last stage,
  // except under GPipe, which runs every forward before the first backward.
  const double head_in_flight = cfg.schedule == ScheduleKind::GPipe ? static_cast<double>(cfg.num_micro_batches) : 1.0;
  if (stage == last_chunk_rank(cfg))
    bytes += head_in_flight * (head_activation_bytes(m, b, s, t, sp, e, p.job.knobs.loss_chunk_bytes) +
                               mtp_extra_activation_bytes(p, cfg)) +
             loss_chunk_working_bytes(m, b, s, t, p.job.knobs.loss_chunk_bytes);
  if (cfg.zero_stage >= 3 && !pipeline_keeps_unsharded(p, cfg)) {
    // Current and prefetched layer gathered to full (TP-local) size (under a pipeline that keeps the
    // stage unsharded, its whole weights are counted as static: costmodel/fsdp2_pipeline.h).
    bytes += 2.0 * layer_parameters_per_gpu(m, t) * param_bytes(p.job).weights;
    bytes += expert_gather_buffer_bytes(p, cfg);  // ZeRO-3 with EP: the gathered experts (costmodel/expert_fsdp.h)
  }
  return bytes;
}

MemoryBreakdown stage_memory(const Problem& p, const ParallelConfig& cfg, int stage) {
  const double params = stage_parameters_per_gpu(p.model, cfg, stage);
  StaticBytes st = static_bytes(params, param_bytes(p.job), cfg.zero_stage, zero_shard_size(cfg));  // HSDP: costmodel/hsdp.h
  if (pipeline_keeps_unsharded(p, cfg)) st = pipeline_unsharded_static_bytes(p, params, st);
  const StaticBytes ex = stage_expert_static_bytes(p, cfg, stage);  // MoE: sharded over edp
  MemoryBreakdown mb;
  const int layers = stage_layers(p.model, cfg, stage) + stage_mtp_layers(p.model, cfg, stage);
  // FP8 primary weights drop the linear layers' 16-bit copy (costmodel/fp8_params.h).
  mb.weights_bytes = st.weights + fp8_stage_bytes(p, cfg, layers) - fp8_param_saved_bytes(p, cfg, layers) + ex.weights;
  mb.gradients_bytes = st.gradients + ex.gradients;
  mb.optimizer_bytes = st.optimizer + ex.optimizer;
  mb.activations_bytes = stage_activation_bytes(p, cfg, stage);
  mb.other_bytes = p.hardware.other_memory_bytes;
  mb.peak_bytes = mb.weights_bytes + mb.gradients_bytes + mb.optimizer_bytes + mb.activations_bytes +
                  mb.other_bytes;
  mb.worst_stage = stage;
  return mb;
}

namespace {
// Per-configuration constants of the fast path: everything but the stage's layer count and
// micro-batches in flight.
struct MemoryTerms {
  double layer_params = 0, embedding_params = 0, head_params = 0, mtp_params = 0;
  double layer_activation = 0, working = 0, embedding_activation = 0, head_activation = 0, zero3_buffers = 0;
};

MemoryTerms memory_terms(const Problem& p, const ParallelConfig& cfg) {
  const ModelSpec& m = p.model;
  const double b = static_cast<double>(cfg.micro_batch_size);
  const double s = cp_local_seq(p, cfg);  // seq / cp
  const int t = cfg.tp;
  const bool sp = cfg.sequence_parallel;
  const double e = activation_element_bytes(p.job.dtype);
  MemoryTerms k;
  k.layer_params = layer_parameters_per_gpu(m, t);
  k.embedding_params = embedding_parameters_per_gpu(m, t);
  k.head_params = head_parameters_per_gpu(m, cfg);
  k.mtp_params = mtp_parameters_per_gpu(m, cfg, last_chunk_rank(cfg));
  k.layer_activation = layer_activation_bytes_for(p, cfg);
  k.working = policy_working_bytes(p, cfg);  // costmodel/ac_policy.h
  k.embedding_activation = embedding_activation_bytes(m, b, s, t, sp);
  const double head_in_flight =
      cfg.schedule == ScheduleKind::GPipe ? static_cast<double>(cfg.num_micro_batches) : 1.0;
  k.head_activation = head_in_flight * (head_activation_bytes(m, b, s, t, sp, e, p.job.knobs.loss_chunk_bytes) +
                                        mtp_extra_activation_bytes(p, cfg)) +
                      loss_chunk_working_bytes(m, b, s, t, p.job.knobs.loss_chunk_bytes);
  if (cfg.zero_stage >= 3 && !pipeline_keeps_unsharded(p, cfg))
    k.zero3_buffers = 2.0 * k.layer_params * param_bytes(p.job).weights + expert_gather_buffer_bytes(p, cfg);
  return k;
}
}  // namespace

// Fast path of max over stages of stage_memory (the reference; a test compares them).
MemoryBreakdown estimate_memory(const Problem& p, const ParallelConfig& cfg) {
  const MemoryTerms k = memory_terms(p, cfg);
  const ParamBytes pb = param_bytes(p.job);
  const double d = static_cast<double>(zero_shard_size(cfg));  // ZeRO shards over dp * cp (HSDP: its shard group)
  const double shard_w = cfg.zero_stage >= 3 ? d : 1.0, shard_g = cfg.zero_stage >= 2 ? d : 1.0,
               shard_o = cfg.zero_stage >= 1 ? d : 1.0;
  const bool unsharded = pipeline_keeps_unsharded(p, cfg);
  MemoryBreakdown worst;
  worst.peak_bytes = -1.0;
  for (int stage = 0; stage < cfg.pp; ++stage) {
    const bool first = stage == first_chunk_rank(cfg), last = stage == last_chunk_rank(cfg);
    const int main_layers = stage_layers(p.model, cfg, stage);
    const int layers = main_layers + stage_mtp_layers(p.model, cfg, stage);  // MTP layers: costmodel/mtp.h
    const double params = main_layers * k.layer_params + (first ? k.embedding_params : 0.0) +
                          (last ? k.head_params + k.mtp_params : 0.0);
    const double in_flight = microbatches_in_flight(cfg.schedule, cfg.pp, cfg.virtual_stages,
                                                    cfg.num_micro_batches, stage);
    const double embedding_in_flight =
        first_chunk_in_flight(cfg.schedule, cfg.pp, cfg.virtual_stages, cfg.num_micro_batches);
    MemoryBreakdown mb;
    const StaticBytes ex = stage_expert_static_bytes(p, cfg, stage);  // MoE: sharded over edp
    StaticBytes st{params * pb.weights / shard_w, params * pb.gradients / shard_g, params * pb.optimizer / shard_o};
    if (unsharded) st = pipeline_unsharded_static_bytes(p, params, st);  // costmodel/fsdp2_pipeline.h
    mb.weights_bytes = st.weights + fp8_stage_bytes(p, cfg, layers) - fp8_param_saved_bytes(p, cfg, layers) + ex.weights;
    mb.gradients_bytes = st.gradients + ex.gradients;
    mb.optimizer_bytes = st.optimizer + ex.optimizer;
    mb.activations_bytes = in_flight * offload_resident_layers(p, layers) * k.layer_activation + k.working +
                           (first ? embedding_in_flight * k.embedding_activation : 0.0) + (last ? k.head_activation : 0.0) +
                           k.zero3_buffers;
    mb.other_bytes = p.hardware.other_memory_bytes;
    mb.peak_bytes = mb.weights_bytes + mb.gradients_bytes + mb.optimizer_bytes + mb.activations_bytes +
                    mb.other_bytes;
    mb.worst_stage = stage;
    if (mb.peak_bytes > worst.peak_bytes) worst = mb;
  }
  return worst;
}

}  // namespace meshplan
