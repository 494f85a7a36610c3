// Activation and element-wise bytes meshplan's executor saves by keeping its bf16-read activations in bf16.
#pragma once
#include "core/model_spec.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// Bytes per layer and micro-batch that keeping h1, h2 and act in bf16 instead of e-byte elements
/// saves (executor/model/gemm_stash.h; FrameworkKnobs::executor_bf16_gemm_stash), on one GPU with
/// T = b s tokens (s per CP rank), hidden h, MLP width f, tp t:
///   (e - 2) [ T h / r                      h1, the attention norm's output (every layer)
///           + (1 - m) (T h / r + T f / t) ]  h2 and act (dense-MLP layers; MoE layers keep fp32)
/// with r = t under sequence parallelism (the norms' outputs are row shards), else 1, and m the
/// share of MoE layers. 0 when e <= 2. The layer stash (recompute none or selective) and the
/// working set of a fully recomputed layer both shrink by it; full recompute's own stash (the layer
/// input) does not. TinyLlama 1.1B (h 2048, f 5632), b 8, s 2048, fp32: 318.8 MB per layer.
double executor_bf16_stash_saving_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, double e);

/// The same for q, k, v and the attention output kept in bf16 (FrameworkKnobs::
/// executor_bf16_attention_stash; the model keeps them so without context parallelism only):
///   (e - 2) T (2 Q + 2 K)     Q = NH D / t, K = NKV D / t   (q and out, k and v)
/// TinyLlama 1.1B (32 heads, 4 kv heads of 64), b 8, s 2048, fp32: 151.0 MB per layer.
double executor_bf16_attention_saving_bytes(const ModelSpec& m, double b, double s, int tp, double e);

/// Element-wise bytes (per layer and micro-batch, forward) that the kernels writing the bf16 stash
/// directly save over an fp32 kernel plus a narrowing pass (Backend::rmsnorm_forward_bf16,
/// swiglu_forward_bf16, rope_forward_bf16; executor/model/gemm_stash.cpp). Each such element was
/// written in fp32 (4) and narrowed (read 4, write 2): now written once in bf16 (2), 8 bytes fewer:
///   gemm_stash:      8 T (2C + F)  (h1, h2 and act; under SP, tp > 1, only act: 8 T F, the norms'
///                                   row shards are still all-gathered in fp32 first)
///   attention_stash: 8 T (Q + K)   (q and k, rotated straight into bf16)
/// with C the hidden size, F = MLP width / t, Q = NH D / t, K = NKV D / t. The backward is unchanged.
EagerBytes executor_fused_bf16_saving_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, bool gemm_stash,
                                            bool attention_stash);

}  // namespace meshplan
