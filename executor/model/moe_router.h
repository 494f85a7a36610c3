// Top-k router of a MoE layer on the host: softmax over the E experts, the k largest, gates
// renormalised over the chosen k (Mixtral; Megatron-Core's topk-then-softmax is the same numbers),
// and the gates' backward into the router logits.
#pragma once
#include <cstdint>
#include <vector>

namespace meshplan::exec {

/// The routing of N tokens to k of E experts each; slot s = n*k + j.
struct Routing {
  int64_t tokens = 0;           // N
  int64_t k = 0;                // experts per token
  std::vector<int32_t> expert;  // (N*k) chosen experts, each token's in descending probability
  std::vector<float> gate;      // (N*k) softmax of the chosen logits (sums to 1 per token)
};

/// logits (N, E) row-major. Ties go to the lower expert index, so every layout routes alike.
/// Gates: p = softmax(logits) over E; g_j = p_j / sum over the chosen of p, as Hugging Face's
/// MixtralSparseMoeBlock ("routing_weights /= routing_weights.sum(dim=-1, keepdim=True)") and
/// Megatron-Core with moe_router_pre_softmax=False (topk_routing_with_score_function in
/// megatron/core/transformer/moe/moe_utils.py: top-k of the logits, then softmax over those k).
Routing route_top_k(const std::vector<float>& logits, int64_t N, int64_t E, int64_t k);

/// dlogits (N, E) from dL/dgate (N*k): for chosen m, g_m (dg_m - sum_j g_j dg_j); 0 elsewhere
/// (the selection itself is piecewise constant).
std::vector<float> router_backward(const Routing& r, const std::vector<double>& dgate, int64_t E);

}  // namespace meshplan::exec
