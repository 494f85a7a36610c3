// Per-GPU memory: weights, gradients and optimizer state split by TP/PP and sharded by ZeRO, plus
// activations, ZeRO-3 buffers and the profile's "other" bytes, for one pipeline stage.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/estimate.h"

namespace meshplan {

/// Weights, gradients and optimizer bytes of `parameters` parameters held by one GPU of a DP group
/// of `dp` ranks under `zero_stage`: ZeRO-1 shards the optimizer state, ZeRO-2 also the
/// gradients, ZeRO-3 also the weights (each divided by dp). Example: 13e9 params, 16 B/param,
/// dp 8: 208 / 71.5 / 48.75 / 26 GB for ZeRO 0/1/2/3.
struct StaticBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};

StaticBytes static_bytes(double parameters, ParamConvention c, int zero_stage, int dp);
/// The same with the job's bytes per parameter (param_bytes(const Job&): its optimizer states).
StaticBytes static_bytes(double parameters, const ParamBytes& pb, int zero_stage, int dp);

/// Parameters of one transformer layer held by one GPU: matrices split by TP, norms replicated.
double layer_parameters_per_gpu(const ModelSpec& m, int tp);

/// Vocab-parallel token embedding V*h/t (+ replicated learned positions) on the first chunk.
double embedding_parameters_per_gpu(const ModelSpec& m, int tp);
/// Final norm + LM head V*h/t on the last chunk (the head is a second copy when tied and pp > 1).
double head_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg);

/// Parameters of model chunk `chunk` (0 <= chunk < pp*v) held by one GPU (before ZeRO).
double chunk_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int chunk);

/// Parameters held by one GPU of pipeline rank `stage` (before ZeRO): its layers, the
/// vocab-parallel embedding on stage 0, final norm and LM head on the last stage (with tied
/// embeddings and pp > 1 the last stage keeps its own copy of the embedding matrix, as Megatron).
double stage_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage);

/// Full breakdown for one pipeline rank (the plain reference; estimate_memory is the fast path that
/// computes the per-configuration terms once and must equal the max of this over the stages).
MemoryBreakdown stage_memory(const Problem& p, const ParallelConfig& cfg, int stage);

/// FP8 weight copies (and transposes, scales) plus scaling state of a stage of `layers` layers on one
/// GPU, counted with the weights; 0 without an FP8 recipe (costmodel/fp8.h). Every layer's copies under
/// ZeRO 0-2; under ZeRO-3 only the two gathered layers' (current and prefetched), plus every layer's
/// scaling state.
double fp8_stage_bytes(const Problem& p, const ParallelConfig& cfg, int layers);

}  // namespace meshplan
