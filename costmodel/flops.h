// Exact transformer training FLOPs per layer and per step (Megatron counting), and 6ND.
#pragma once
#include "core/framework_knobs.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Forward FLOPs of one transformer layer for `sequences` sequences of `seq` tokens (whole layer,
/// not divided by TP). A multiply-add is 2 FLOPs. Causal masking is NOT discounted in the
/// attention core, as Megatron-LM (Narayanan et al. 2021, Korthikanti et al. 2022) counts.
struct LayerFlops {
  double qkv = 0;         // 2*T*h*(h + 2*kv): Q (h x h), K and V (h x kv each), T = sequences*seq
  double scores = 0;      // 2*sequences*seq^2*h: Q K^T for all heads
  double values = 0;      // 2*sequences*seq^2*h: softmax(.) V
  double out_proj = 0;    // 2*T*h*h
  double mlp_up = 0;      // 2*T*h*f, times 2 for gated (gate and up projections)
  double mlp_down = 0;    // 2*T*f*h
  double expert_up = 0;   // MoE: routed experts' input projections (costmodel/moe_cost.h); 0 dense
  double expert_down = 0; // MoE: routed experts' output projections
  double router = 0;      // MoE: 2*T*h*E router GEMM
  double attention_core() const { return scores + values; }
  double gemms() const { return qkv + out_proj + mlp_up + mlp_down + expert_up + expert_down + router; }
  double total() const { return gemms() + attention_core(); }
};

LayerFlops layer_forward_flops(const ModelSpec& m, double sequences, double seq);

/// Forward FLOPs of the LM head (logits): 2*T*h*V.
double logits_forward_flops(const ModelSpec& m, double sequences, double seq);

/// Training FLOPs of one step for `sequences` sequences: forward x1 + backward x2 of every layer and
/// the logits. `model` excludes recomputation (for MFU); `hardware` adds it (for HFU): full
/// recompute = one more forward of every layer, selective = one more attention core per layer;
/// a fused attention kernel adds its backward's recomputed Q K^T (costmodel/attention.h).
struct StepFlops {
  double model = 0;
  double hardware = 0;
};

StepFlops step_flops(const ModelSpec& m, double sequences, double seq, Recompute r,
                     AttentionKind attention = AttentionKind::Materialized);

/// Extra forward FLOPs that recomputation adds to one layer.
double recompute_flops(const LayerFlops& f, Recompute r);

/// The 6ND approximation of training compute (N parameters, D tokens).
double six_nd_flops(double parameters, double tokens);

}  // namespace meshplan
