// Pipeline arithmetic: layers per chunk/stage without allocating, bubble fractions, p2p transfers.
#pragma once
#include "core/parallel_config.h"

namespace meshplan {

/// Layers of chunk c (0 <= c < pp*v), identical to layers_per_chunk(m, cfg)[c] but allocation-free.
int chunk_layers(const ModelSpec& m, const ParallelConfig& cfg, int chunk);

/// Layers held by pipeline rank `stage` (its v chunks stage, stage+pp, ...).
int stage_layers(const ModelSpec& m, const ParallelConfig& cfg, int stage);

/// Pipeline bubble as a fraction of the whole step, equal stages:
///   GPipe / 1F1B: (P-1)/(M+P-1);  interleaved: (P-1)/(v*M + P-1);
///   ZB-H1 with T_F = T_B = T_W: (P-1)/(3M + P-1) (a third of the 1F1B bubble time).
double bubble_fraction(ScheduleKind s, int pp, int v, int64_t num_micro_batches);

/// The same bubble relative to the ideal (bubble-free) time, Narayanan et al. 2021:
///   GPipe / 1F1B: (P-1)/M;  interleaved: (P-1)/(v*M);  ZB-H1: (P-1)/(3M).
double bubble_relative(ScheduleKind s, int pp, int v, int64_t num_micro_batches);

/// Bytes one GPU sends for one activation (or its gradient) between stages: s*b*h 16-bit values
/// divided by t. With sequence parallelism each TP rank owns a sequence shard; without it Megatron's
/// scatter/gather optimisation (Narayanan et al. 2021, sec. 4.1) sends a 1/t slice per TP rank over
/// its own NIC and all-gathers it on the receiving node (p2p_gather_bytes).
double p2p_activation_bytes(const Problem& p, const ParallelConfig& cfg);

/// Bytes of that intra-node all-gather (the full s*b*h activation) when tp > 1 without sequence
/// parallelism; 0 otherwise.
double p2p_gather_bytes(const Problem& p, const ParallelConfig& cfg);

}  // namespace meshplan
