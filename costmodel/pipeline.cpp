// Pipeline layer split, bubble fractions and p2p sizes (costmodel/README.md "Pipeline").
#include "costmodel/pipeline.h"

#include "core/pipeline_placement.h"
#include "costmodel/context_parallel.h"

#include <algorithm>

namespace meshplan {

int chunk_layers(const ModelSpec& m, const ParallelConfig& cfg, int chunk) {
  if (!cfg.layers_per_stage.empty()) return cfg.layers_per_stage[chunk];
  const int chunks = cfg.pp * std::max(1, cfg.virtual_stages);
  const int base = static_cast<int>(m.num_layers / chunks);
  const int extra = static_cast<int>(m.num_layers % chunks);
  const int start = (chunks - extra) / 2;  // same rule as core layers_per_chunk: extras in the middle
  return base + (chunk >= start && chunk < start + extra ? 1 : 0);
}

int stage_layers(const ModelSpec& m, const ParallelConfig& cfg, int stage) {
  int n = 0;
  for (int k = 0; k < std::max(1, cfg.virtual_stages); ++k) n += chunk_layers(m, cfg, placed_chunk(cfg, stage, k));
  return n;
}

double bubble_relative(ScheduleKind s, int pp, int v, int64_t M) {
  const double p1 = static_cast<double>(pp - 1);
  const double Md = static_cast<double>(M);
  switch (s) {
    case ScheduleKind::GPipe:
    case ScheduleKind::OneFOneB: return p1 / Md;
    case ScheduleKind::Interleaved: return p1 / (std::max(1, v) * Md);
    case ScheduleKind::ZeroBubbleH1: return p1 / (3.0 * Md);
    // DualPipeV with equal chunks whose forward, input-gradient and weight-gradient passes take one unit
    // each: P-1 units of fill and drain against 6 units per micro-batch (two chunks of F + B + W); a
    // sixth of 1F1B's. costmodel/step.cpp bubble_unit has the general form.
    case ScheduleKind::DualPipeV: return p1 / (6.0 * Md);
  }
  return 0.0;
}

double bubble_fraction(ScheduleKind s, int pp, int v, int64_t M) {
  const double rel = bubble_relative(s, pp, v, M);
  return rel / (1.0 + rel);
}

double p2p_activation_bytes(const Problem& p, const ParallelConfig& cfg) {
  const double bytes = 2.0 * cp_local_seq(p, cfg) * static_cast<double>(cfg.micro_batch_size) *
                       static_cast<double>(p.model.hidden_size);
  return bytes / cfg.tp;
}

double p2p_gather_bytes(const Problem& p, const ParallelConfig& cfg) {
  if (cfg.tp <= 1 || cfg.sequence_parallel) return 0.0;
  return 2.0 * cp_local_seq(p, cfg) * static_cast<double>(cfg.micro_batch_size) *
         static_cast<double>(p.model.hidden_size);
}

}  // namespace meshplan
