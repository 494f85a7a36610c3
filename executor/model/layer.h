// One Llama transformer layer on one TP rank: x + attn(norm(x)), then + mlp(norm(.)), forward and
// backward, with what each recompute mode stashes. Shapes use N = B*T rows, Nl local rows.
#pragma once
#include <cstdint>
#include <memory>

#include "core/parallel_config.h"
#include "executor/backend.h"
#include "executor/model/param_layout.h"
#include "executor/model/parallel_groups.h"
#include "executor/model/tp_ops.h"
#include "executor/tensor.h"

namespace meshplan::exec {

/// TP-local sizes of a layer.
struct LayerDims {
  int64_t B = 0, T = 0, C = 0;  // T: this rank's tokens per sequence (T_full / cp)
  int64_t nh = 0;   // local query heads  NH / tp
  int64_t nkv = 0;  // local kv heads     NKV / tp
  int64_t D = 0;    // head dim
  int64_t f = 0;    // local MLP width    F / tp
  int64_t N = 0;    // B*T
  int64_t Nl = 0;   // rows of the residual stream on this rank
  float eps = 1e-5f;
  float theta = 10000.0f;
  int64_t T_full = 0;   // tokens per sequence over the CP group
  int64_t experts = 0;  // MoE: E routed experts, top_k of them per token, width fe each
  int64_t top_k = 0;
  int64_t fe = 0;
  int64_t qd() const { return nh * D; }
  int64_t kvd() const { return nkv * D; }
  AttentionDims attention() const { return AttentionDims{B, T, nh, nkv, D}; }
  AttentionDims cp_attention() const { return AttentionDims{B, T_full, nh, nkv, D}; }
};

/// Element offsets of a layer's tensors from the start of its block (identical for every layer).
/// -1 for tensors the layer does not have (dense: no router/experts; MoE: no w_gate/w_up/w_down).
struct LayerOffsets {
  int64_t attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down;
  int64_t router = -1, expert_gate = -1, expert_up = -1, expert_down = -1;
  bool moe() const { return router >= 0; }
};
LayerOffsets layer_offsets(const ParamLayout& layout, int block);

/// Pointers to one layer's parameters (or gradients) inside a block.
template <class P>
struct LayerTensors {
  P attn_norm;  // (C)
  P wq;         // (nh*D, C)
  P wk;         // (nkv*D, C)
  P wv;         // (nkv*D, C)
  P wo;         // (C, nh*D)
  P mlp_norm;   // (C)
  P w_gate;     // (f, C)
  P w_up;       // (f, C)
  P w_down;     // (C, f)
  P router = nullptr;       // MoE: (E, C)
  P expert_gate = nullptr;  // MoE: (El*Fe, C), this EP rank's El experts
  P expert_up = nullptr;    // MoE: (El*Fe, C)
  P expert_down = nullptr;  // MoE: (El*C, Fe)
};
using LayerWeights = LayerTensors<const float*>;
using LayerGrads = LayerTensors<float*>;
LayerWeights layer_weights(const float* block, const LayerOffsets& o);
LayerGrads layer_grads(float* block, const LayerOffsets& o);

/// Activations one layer keeps from forward to backward (the input x is kept by the chunk).
struct LayerStash {
  Tensor rstd1;  // (Nl)
  Tensor h1;     // (Nl, C) attn norm out; bf16 when the backend rounds GEMM inputs (gemm_stash.h)
  Tensor q;      // (N, nh*D)  rotated
  Tensor k;      // (N, nkv*D) rotated
  Tensor v;      // (N, nkv*D)
  Tensor att;    // (N, nh*D)  attention out (wo input)
  Tensor lse;    // (B, nh, T)
  Tensor probs;  // (B, nh, T, T) only without recompute
  Tensor x_mid;  // (Nl, C) x + attention branch
  Tensor rstd2;  // (Nl)
  Tensor h2;     // (Nl, C) mlp norm out; bf16 as h1 (dense MLP; MoE layers keep fp32)
  Tensor gate;   // (N, f)
  Tensor up;     // (N, f)
  Tensor act;    // (N, f) silu(gate) * up (w_down input); bf16 as h1
  std::shared_ptr<struct MoeStash> moe;  // MoE layers: routing and expert activations (moe_layer.h)
  bool empty() const { return h1.empty(); }
};

/// Everything a layer call needs besides its tensors.
struct LayerContext {
  Backend& backend;
  TpOps& tp;
  const LayerDims& dims;
  const EpCpGroups* groups = nullptr;  // EP (MoE layers) and CP (attention); null: both size 1
};

/// y (Nl, C) = layer(x (Nl, C)); fills `st` (probs only when keep_probs).
void layer_forward(const LayerContext& ctx, const LayerWeights& w, const float* x, float* y,
                   LayerStash& st, bool keep_probs);
/// dres (Nl, C): in = dL/dy, out = dL/dx. Adds parameter gradients into g.
void layer_backward(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                    const float* x, const LayerStash& st, float* dres);

/// Halves, used by layer_forward/backward (attention.cpp and mlp.cpp).
void attention_forward_half(const LayerContext& ctx, const LayerWeights& w, const float* x,
                            LayerStash& st, bool keep_probs);
void attention_backward_half(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                             const float* x, const LayerStash& st, float* dres);
void mlp_forward_half(const LayerContext& ctx, const LayerWeights& w, float* y, LayerStash& st);
void mlp_backward_half(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                       const LayerStash& st, float* dres);

/// MoE MLP half (moe_layer.cpp): router, top-k, dispatch to the EP ranks' experts, combine.
void moe_forward_half(const LayerContext& ctx, const LayerWeights& w, float* y, LayerStash& st);
void moe_backward_half(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                       const LayerStash& st, float* dres);

/// dx += norm backward; the gain's gradient goes to dw (+=), summed over TP ranks with SP.
void norm_backward(const LayerContext& ctx, float* dx, float* dw, const float* dout,
                   const float* x, const float* w, const float* rstd, int64_t rows);

}  // namespace meshplan::exec
