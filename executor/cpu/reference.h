// Plain twins of the CPU fast paths (triple-loop GEMM, scalar attention): the references the fast
// paths are tested against, and what CpuOptions selects for a whole "plain" run.
#pragma once
#include <cstdint>

#include "executor/backend.h"

namespace meshplan::exec {

/// C (M, N) = alpha * op(A) op(B) + beta * C by three loops, accumulating in double.
void gemm_naive(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, const float* B, float beta, float* C);
/// Eigen GEMM, same contract.
void gemm_eigen(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, const float* B, float beta, float* C);

/// Scalar causal GQA attention, one query row at a time (same contract as Backend).
void attention_forward_reference(float* out, float* lse, float* probs, const float* q,
                                 const float* k, const float* v, const AttentionDims& d);
void attention_backward_reference(float* dq, float* dk, float* dv, const float* dout,
                                  const float* q, const float* k, const float* v,
                                  const float* lse, const AttentionDims& d);
/// Per (sequence, head) Eigen GEMMs over the strided head slices. `workspace` holds
/// attention_workspace_floats(d) floats (the (T, T) score matrices), or is null to allocate
/// untracked scratch (tests).
int64_t attention_workspace_floats(const AttentionDims& d);
void attention_forward_eigen(float* out, float* lse, float* probs, const float* q, const float* k,
                             const float* v, const AttentionDims& d, float* workspace = nullptr);
void attention_backward_eigen(float* dq, float* dk, float* dv, const float* dout, const float* q,
                              const float* k, const float* v, const float* lse,
                              const float* probs, const AttentionDims& d,
                              float* workspace = nullptr);

}  // namespace meshplan::exec
