// The bf16 stash: activations whose every reader rounds them to bf16, kept so (see gemm_stash.h).
#include "executor/model/gemm_stash.h"

#include <cassert>

namespace meshplan::exec {

Tensor narrow_to_bf16(Backend& be, Tensor x) {
  assert(x.dtype() == DType::F32);
  Tensor narrow(be, DType::BF16, x.shape());
  be.to_bf16(narrow.data(), x.f32(), x.numel());
  return narrow;
}

Tensor keep_gemm_input(Backend& be, Tensor x) {
  if (!be.keeps_bf16_gemm_stash()) return x;
  return narrow_to_bf16(be, std::move(x));
}

namespace {
GemmOperand stash_column_input(TpOps& tp, Backend& be, Tensor local, Tensor& stash, Tensor& gathered) {
  if (!tp.gathers()) {
    stash = keep_gemm_input(be, std::move(local));
    return GemmOperand::of(stash);
  }
  const float* full = tp.to_full(local.f32(), gathered);
  stash = keep_gemm_input(be, std::move(local));
  return GemmOperand::f32(full);
}
}  // namespace

GemmOperand norm_column_input(TpOps& tp, Backend& be, const float* x, const float* w, float* rstd, int64_t rows,
                              int64_t C, float eps, Tensor& stash, Tensor& gathered) {
  if (!tp.gathers() && be.keeps_bf16_gemm_stash()) {
    stash = Tensor(be, DType::BF16, {rows, C});
    be.rmsnorm_forward_bf16(stash.data(), rstd, x, w, rows, C, eps);
    return GemmOperand::of(stash);
  }
  Tensor h(be, DType::F32, {rows, C});
  be.rmsnorm_forward(h.f32(), rstd, x, w, rows, C, eps);
  return stash_column_input(tp, be, std::move(h), stash, gathered);
}

Tensor swiglu_gemm_input(Backend& be, const Tensor& gate, const Tensor& up) {
  assert(gate.numel() == up.numel());
  if (be.keeps_bf16_gemm_stash()) {
    Tensor act(be, DType::BF16, gate.shape());
    be.swiglu_forward_bf16(act.data(), gate.f32(), up.f32(), gate.numel());
    return act;
  }
  Tensor act(be, DType::F32, gate.shape());
  be.swiglu_forward(act.f32(), gate.f32(), up.f32(), gate.numel());
  return act;
}

GemmOperand stashed_column_input(TpOps& tp, Backend& be, const Tensor& stash, Tensor& gathered) {
  if (!tp.gathers()) return GemmOperand::of(stash);
  if (stash.dtype() == DType::F32) return GemmOperand::f32(tp.to_full(stash.f32(), gathered));
  Tensor wide(be, DType::F32, stash.shape());  // (Nl, C) fp32, freed once gathered
  be.from_bf16(wide.f32(), stash.data(), stash.numel());
  return GemmOperand::f32(tp.to_full(wide.f32(), gathered));
}

}  // namespace meshplan::exec
