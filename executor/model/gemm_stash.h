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

/// Forward: keeps the row-local (Nl, C) GEMM input `local` in `stash` (keep_gemm_input) and returns
/// the (N, C) operand the column-parallel GEMMs read: the stash itself without sequence
/// parallelism; with it, the all-gather of the fp32 rows into `gathered`, made before narrowing.
GemmOperand stash_column_input(TpOps& tp, Backend& be, Tensor local, Tensor& stash, Tensor& gathered);

/// Backward: the (N, C) operand of a stashed row-local input: the stash itself without sequence
/// parallelism; with it, the stash widened to fp32 (when bf16) and all-gathered into `gathered`.
GemmOperand stashed_column_input(TpOps& tp, Backend& be, const Tensor& stash, Tensor& gathered);

}  // namespace meshplan::exec
