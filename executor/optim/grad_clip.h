// Global-norm gradient clipping across TP/PP/DP: local sums of squares of the gradients this rank
// owns, reduced by a caller-supplied callback over the right process groups, then one scale.
#pragma once
#include <functional>
#include <vector>

#include "executor/backend.h"
#include "executor/model/param_layout.h"

namespace meshplan::exec {

/// Gradients of one flat range; segments are relative to `grads` and cover what is summed.
struct GradRange {
  float* grads = nullptr;
  std::vector<FlatSegment> segments;
};

/// Sum of squares this rank contributes. TP-replicated tensors (norm gains) are identical on every
/// TP rank, so they count only when count_tp_replicated (pass tp_rank == 0).
double local_grad_sumsq(Backend& backend, const std::vector<GradRange>& ranges,
                        bool count_tp_replicated);

/// sqrt(reduce_sum(local sum of squares)). reduce_sum must sum over every group whose members hold
/// different gradient elements: TP and PP always, DP too when gradients are ZeRO-sharded (after a
/// plain DP all-reduce all DP ranks hold the same values: do not sum over DP then).
double global_grad_norm(Backend& backend, const std::vector<GradRange>& ranges,
                        bool count_tp_replicated, const std::function<double(double)>& reduce_sum);

/// Scale factor clipping uses: max_norm / (norm + 1e-6) when norm > max_norm, else 1 (like
/// torch.nn.utils.clip_grad_norm_). max_norm <= 0 disables clipping.
float clip_factor(double norm, float max_norm);

/// Multiplies every segment of every range by factor (no-op for 1).
void scale_grads(Backend& backend, const std::vector<GradRange>& ranges, float factor);

/// global_grad_norm, then scales every range by clip_factor. Returns the norm before clipping.
double clip_grad_norm(Backend& backend, const std::vector<GradRange>& ranges,
                      bool count_tp_replicated, const std::function<double(double)>& reduce_sum,
                      float max_norm);

}  // namespace meshplan::exec
