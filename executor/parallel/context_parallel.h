// Context parallelism: each sequence split over cp ranks with Megatron's causal load balancing
// (2*cp chunks, rank r holds chunks r and 2cp-1-r), ring exchange of K/V over the CP group with
// online-softmax merging of the partial results, and the backward by the same ring.
#pragma once
#include <cstdint>
#include <vector>

#include "executor/backend.h"
#include "executor/model/parallel_groups.h"

namespace meshplan::exec {

/// Global position of local token t (0 <= t < T/cp) on CP rank `rank`: local tokens are chunk
/// `rank` then chunk 2*cp-1-rank of the 2*cp chunks of T/(2*cp) tokens. Megatron-LM splits this
/// way so every rank gets the same causal work ("get_batch_on_this_cp_rank",
/// megatron/training/utils.py). cp == 1: t. Needs T % (2*cp) == 0 (validate_chunk).
int64_t cp_global_position(int64_t t, int64_t T, int cp, int rank);

/// The (B, T/cp) tokens of CP rank `rank` out of (B, T) tokens.
std::vector<int32_t> cp_local_tokens(const int32_t* tokens, int64_t B, int64_t T, int cp, int rank);

/// Rotary embedding of x (B, T/cp, H, D) in place, each token at its global position (inverse
/// rotation when `backward`).
void cp_rope(Backend& be, float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta,
             const GroupContext& cp, bool backward);

/// Causal GQA attention of this rank's T/cp tokens against the whole sequence, K/V passed round
/// the CP ring. d.T is the FULL sequence length; q, out (B, T/cp, NH, D), k, v (B, T/cp, NKV, D),
/// lse (B, NH, T/cp). Collective over the CP group.
void cp_attention_forward(Backend& be, const GroupContext& cp, float* out, float* lse,
                          const float* q, const float* k, const float* v, const AttentionDims& d);

/// Its backward: dq, dk, dv overwritten (dk, dv of this rank's tokens, their contributions
/// from every rank's queries carried back round the ring). out and lse from the forward.
void cp_attention_backward(Backend& be, const GroupContext& cp, float* dq, float* dk, float* dv,
                           const float* dout, const float* q, const float* k, const float* v,
                           const float* out, const float* lse, const AttentionDims& d);

}  // namespace meshplan::exec
