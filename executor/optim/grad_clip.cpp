// Global-norm gradient clipping: local sums of squares, one reduction, one scale.
#include "executor/optim/grad_clip.h"

#include <cmath>

namespace meshplan::exec {

double local_grad_sumsq(Backend& backend, const std::vector<GradRange>& ranges,
                        bool count_tp_replicated) {
  double s = 0;
  for (const GradRange& r : ranges) {
    for (const FlatSegment& seg : r.segments) {
      if (seg.tp_replicated && !count_tp_replicated) continue;
      s += backend.sum_squares(r.grads + seg.begin, seg.end - seg.begin);
    }
  }
  return s;
}

double global_grad_norm(Backend& backend, const std::vector<GradRange>& ranges,
                        bool count_tp_replicated, const std::function<double(double)>& reduce_sum) {
  const double local = local_grad_sumsq(backend, ranges, count_tp_replicated);
  return std::sqrt(reduce_sum ? reduce_sum(local) : local);
}

float clip_factor(double norm, float max_norm) {
  if (max_norm <= 0.0f || norm <= max_norm) return 1.0f;
  return static_cast<float>(max_norm / (norm + 1e-6));
}

double clip_grad_norm(Backend& backend, const std::vector<GradRange>& ranges,
                      bool count_tp_replicated, const std::function<double(double)>& reduce_sum,
                      float max_norm) {
  const double norm = global_grad_norm(backend, ranges, count_tp_replicated, reduce_sum);
  scale_grads(backend, ranges, clip_factor(norm, max_norm));
  return norm;
}

void scale_grads(Backend& backend, const std::vector<GradRange>& ranges, float factor) {
  if (factor == 1.0f) return;
  for (const GradRange& r : ranges) {
    for (const FlatSegment& seg : r.segments) backend.scale(r.grads + seg.begin, factor, seg.end - seg.begin);
  }
}

}  // namespace meshplan::exec
