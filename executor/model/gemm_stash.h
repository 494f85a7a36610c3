// The activations a layer keeps for backward whose every reader rounds them to bf16, kept as bf16:
// h1 and h2 (the normed inputs of the column-parallel GEMMs) and act (the SwiGLU output the down
// projection reads) when the backend's GEMMs round their inputs, q, k, v and the attention output
// when its attention does (cuDNN). Half the bytes, the same values.
#pragma once
#include "executor/backend.h"
#include "executor/model/tp_ops.h"
#include "executor/tensor.h"

namespace meshplan::exec {

/// `x` rounded to bf16 in a new tensor of the same shape; the fp32 tensor is freed on return.
Tensor narrow_to_bf16(Backend& be, Tensor x);

/// The stash form of the fp32 GEMM input `x`: its bf16 rounding in a new tensor of the same shape
/// when the backend keeps a bf16 stash (Backend::keeps_bf16_gemm_stash: its GEMMs would round x to
/// the same values), else `x` itself. The fp32 tensor is freed on return.
Tensor keep_gemm_input(Backend& be, Tensor x);

/// Forward: RMSNorm of the row-local x (rows, C) (rstd out as Backend::rmsnorm_forward), kept in
/// `stash`, and the (N, C) operand the column-parallel GEMMs read. With a bf16 stash and no
/// sequence parallelism the norm writes bf16 directly (rmsnorm_forward_bf16: no fp32 copy) and the
/// stash is the operand; under SP the fp32 rows are all-gathered into `gathered` first, then the
/// stash is narrowed; without a bf16 stash it is the fp32 output.
GemmOperand norm_column_input(TpOps& tp, Backend& be, const float* x, const float* w, float* rstd, int64_t rows,
                              int64_t C, float eps, Tensor& stash, Tensor& gathered);

/// Forward: silu(gate) * up (n elements) as the down projection's input, kept for its backward:
/// bf16 straight from the kernel with a bf16 stash (swiglu_forward_bf16), else fp32.
Tensor swiglu_gemm_input(Backend& be, const Tensor& gate, const Tensor& up);

/// Backward: the (N, C) operand of a stashed row-local input: the stash itself without sequence
/// parallelism; with it, the stash widened to fp32 (when bf16) and all-gathered into `gathered`.
GemmOperand stashed_column_input(TpOps& tp, Backend& be, const Tensor& stash, Tensor& gathered);

}  // namespace meshplan::exec
