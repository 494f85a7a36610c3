// Compressed DP gradient reduction (PowerSGD, 1-bit Adam/LAMB, top-k): bytes, time, warm-up.
#include "costmodel/grad_compression.h"

#include <algorithm>

#include "core/pipeline_placement.h"
#include "costmodel/compute_time.h"
#include "costmodel/memory.h"
#include "costmodel/pipeline.h"

namespace meshplan {

namespace {
// The stage's TP-local weight matrices, as sum of n*m (elements) and sum of n+m, per GPU.
struct MatrixShapes {
  double elements = 0;   // sum n m
  double edges = 0;      // sum (n + m)
  double vectors = 0;    // parameters outside matrices (norms, biases)
};

MatrixShapes stage_matrices(const Problem& p, const ParallelConfig& cfg, int stage) {
  const ModelSpec& m = p.model;
  const double t = static_cast<double>(cfg.tp);
  const double h = static_cast<double>(m.hidden_size), kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.intermediate_size) * (m.mlp == MlpKind::Gated ? 2.0 : 1.0);
  const double fd = static_cast<double>(m.intermediate_size);
  MatrixShapes s;
  const double layers = stage_layers(m, cfg, stage);
  // QKV h x (q+2kv)/t, out-projection q/t x h, MLP up h x f/t, down f/t x h (q = heads x head_dim).
  const double q = static_cast<double>(m.q_dim());
  s.edges = layers * ((h + (q + 2.0 * kv) / t) + (q / t + h) + (h + f / t) + (fd / t + h));
  const double params = stage_parameters_per_gpu(m, cfg, stage);
  double matrix = layers * (h * (q + 2.0 * kv) / t + q * h / t + h * f / t + fd * h / t);
  const double V = static_cast<double>(m.vocab_size);
  const int last = last_chunk_rank(cfg);
  if (stage == 0) { matrix += V * h / t; s.edges += V / t + h; }
  if (stage == last && (!m.tie_word_embeddings || cfg.pp > 1)) { matrix += V * h / t; s.edges += V / t + h; }
  s.elements = std::min(matrix, params);
  s.vectors = std::max(0.0, params - s.elements);
  return s;
}
}  // namespace

CompressedReduction compressed_reduction(const Problem& p, const ParallelConfig& cfg, int stage,
                                         const GroupPlacement& g) {
  const HardwareProfile& hw = p.hardware;
  const double gb = param_bytes(p.job).gradients;
  const double N = stage_parameters_per_gpu(p.model, cfg, stage);
  const double n = static_cast<double>(g.size);
  CompressedReduction r;
  r.uncompressed_bytes = N * gb;
  if (g.size <= 1) return r;
  const double ring = 2.0 * (n - 1.0) / n;  // all-reduce bytes on the wire per byte of buffer
  switch (p.job.compression) {
    case GradCompression::None:
      r.comm_s = all_reduce_s(hw, g, N * gb);
      r.bytes_sent = ring * N * gb;
      break;
    case GradCompression::PowerSgd: {
      const MatrixShapes s = stage_matrices(p, cfg, stage);
      const double rank = static_cast<double>(p.job.powersgd_rank);
      // P and Q, each its own all-reduce round; n-side and m-side halves of r(n + m) on average.
      const double pq = rank * s.edges * gb;
      r.comm_s = 2.0 * all_reduce_s(hw, g, pq / 2.0) + all_reduce_s(hw, g, s.vectors * gb);
      r.bytes_sent = ring * (pq + s.vectors * gb);
      r.compute_s = memory_bound_time_s(hw, 7.0 * gb * s.elements);
      r.warmup_steps = kPowerSgdStartIter;
      break;
    }
    case GradCompression::OneBitAdam:
    case GradCompression::OneBitLamb: {
      const double packed = N / 8.0;  // sign bits; one fp32 scale per chunk is negligible
      r.comm_s = collective_time_s(Collective::AllToAll, packed, g.size,
                                   g.spans_nodes() ? hw.inter_node : hw.intra_node) +
                 all_gather_s(hw, g, packed);
      if (p.job.compression == GradCompression::OneBitLamb)
        r.comm_s += all_reduce_s(hw, g, 4.0 * 4.0 * static_cast<double>(stage_layers(p.model, cfg, stage) + 2));
      r.bytes_sent = 2.0 * (n - 1.0) / n * packed;
      r.compute_s = memory_bound_time_s(hw, 20.0 * N);
      r.warmup_steps = kOneBitFreezeStep;
      break;
    }
    case GradCompression::TopK: {
      const double k = p.job.topk_fraction * N;
      const double entry = gb + 4.0;  // value + int32 index
      r.comm_s = all_gather_s(hw, g, n * k * entry);
      r.bytes_sent = (n - 1.0) * k * entry;  // ring all-gather: every other rank's share passes through
      r.compute_s = memory_bound_time_s(hw, 16.0 * N + 2.0 * n * k * entry);
      r.warmup_steps = 0;
      break;
    }
  }
  r.total_s = r.comm_s + r.compute_s;
  return r;
}

}  // namespace meshplan
