// The conjugate tensor-parallel collectives around column- and row-parallel linears (Megatron's
// f/g operators, and their sequence-parallel forms), on (rows, C) activations.
#pragma once
#include <cstdint>

#include "executor/backend.h"
#include "executor/model/model_chunk.h"
#include "executor/tensor.h"

namespace meshplan::exec {

/// N = B*T full rows; Nl = N / tp with sequence parallelism, else N.
class TpOps {
 public:
  TpOps(Backend& backend, const TpContext& tp, int64_t rows_full, int64_t C);

  int64_t rows_local() const { return rows_local_; }
  bool active() const { return tp_.size > 1; }
  /// Whether to_full all-gathers (sequence parallelism over tp > 1) rather than returning `local`.
  bool gathers() const { return rows_local_ != rows_full_; }

  /// Into a column-parallel region (forward) / out of a row-parallel one (backward):
  /// local (Nl, C) -> full (N, C). SP: all-gather into `scratch`; otherwise returns `local`.
  const float* to_full(const float* local, Tensor& scratch);

  /// Out of a row-parallel region (forward) / into a column-parallel one (backward):
  /// partial sums (N, C) -> reduced (Nl, C). SP: reduce-scatter into `scratch`; otherwise an
  /// in-place all-reduce of `partial`, which is returned. tp == 1: returns `partial`.
  const float* reduce_partial(float* partial, Tensor& scratch);

  /// Gradients of replicated tensors computed from a row shard (SP norm gains): sums the
  /// contribution `part` (n) over TP ranks in place. No-op without SP.
  void sum_replicated_grad(float* part, int64_t n);

  /// In-place all-reduce over the TP group (vocab-parallel loss statistics); no-op when tp == 1.
  void all_reduce(float* data, int64_t n, ReduceOp op);

 private:
  Backend& backend_;
  TpContext tp_;
  int64_t rows_full_;
  int64_t rows_local_;
  int64_t C_;
};

}  // namespace meshplan::exec
