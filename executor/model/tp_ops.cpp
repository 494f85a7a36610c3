// Tensor-parallel collectives around the parallel linears (see tp_ops.h).
#include "executor/model/tp_ops.h"

#include <cassert>

namespace meshplan::exec {

TpOps::TpOps(Backend& backend, const TpContext& tp, int64_t rows_full, int64_t C)
    : backend_(backend), tp_(tp), rows_full_(rows_full), C_(C) {
  assert(tp_.size == 1 || tp_.group != nullptr);
  assert(tp_.group == nullptr || tp_.group->size() == tp_.size);
  const bool sp = tp_.sequence_parallel && tp_.size > 1;
  assert(!sp || rows_full % tp_.size == 0);
  rows_local_ = sp ? rows_full / tp_.size : rows_full;
}

const float* TpOps::to_full(const float* local, Tensor& scratch) {
  if (rows_local_ == rows_full_) return local;
  scratch = Tensor(backend_, DType::F32, {rows_full_, C_});
  tp_.group->all_gather(local, scratch.f32(), rows_local_ * C_);
  return scratch.f32();
}

const float* TpOps::reduce_partial(float* partial, Tensor& scratch) {
  if (tp_.size == 1) return partial;
  if (rows_local_ == rows_full_) {
    tp_.group->all_reduce_sum(partial, rows_full_ * C_);
    return partial;
  }
  scratch = Tensor(backend_, DType::F32, {rows_local_, C_});
  tp_.group->reduce_scatter_sum(partial, scratch.f32(), rows_local_ * C_);
  return scratch.f32();
}

void TpOps::sum_replicated_grad(float* part, int64_t n) {
  if (rows_local_ == rows_full_) return;
  tp_.group->all_reduce_sum(part, n);
}

void TpOps::all_reduce(float* data, int64_t n, ReduceOp op) {
  if (tp_.size > 1) tp_.group->all_reduce(data, n, op);
}

}  // namespace meshplan::exec
