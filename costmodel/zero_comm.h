// ZeRO-3 / FSDP parameter gathers and gradient reduce-scatters: collective granularity (FSDP units,
// DeepSpeed buckets), prefetch, and the part exposed when communication outlasts compute.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/collectives.h"

namespace meshplan {

/// One pipeline stage's sharded collectives for one pass of one micro-batch, seconds, over the DP
/// group `g` (alpha-beta with the ring's n-1 latency steps, costmodel/collectives.h).
struct ShardedCollectives {
  int layers = 0;
  double gather_layer_s = 0;   // all-gather of one layer's weights (all its fetches)
  double reduce_layer_s = 0;   // reduce-scatter of one layer's gradients (its share of the buckets)
  double gather_ends_s = 0;    // embedding / final norm / LM head weights (FSDP's root unit)
  double reduce_ends_s = 0;
  double prefetch_fraction = 1;  // share of the next layer's gather that may be in flight early
};

/// Weight matrices of one layer, each its own DeepSpeed fetch (Hugging Face modules): q, k, v, o
/// and the MLP's 2 (plain) or 3 (gated).
int layer_weight_matrices(const ModelSpec& m);

/// PerUnit (FSDP): one all-gather and one reduce-scatter per transformer block and one for the root
/// unit. Buckets (DeepSpeed ZeRO-3): a layer's gather is max(matrices, ceil(P_layer / prefetch
/// bucket)) collectives of equal size; gradients are reduced in buckets of reduce_bucket_elements
/// across layers: ceil(P_stage / bucket) collectives per pass, shared out by bytes. Prefetch:
/// depth 0 hides nothing; otherwise FSDP prefetches the whole next unit, DeepSpeed at most
/// prefetch_bucket_elements of it: fraction min(1, bucket / P_layer).
ShardedCollectives sharded_collectives(const Problem& p, const ParallelConfig& cfg, int stage,
                                       const GroupPlacement& g);

/// Share r of a stage's layers whose backward gathers their weights twice, once for the recomputed
/// forward and once for the backward. DeepSpeed (Buckets) fetches a module's parameters in its
/// forward pre-hook, so every layer whose forward is recomputed fetches again:
/// r = recomputed_layer_share (costmodel/ac_policy.h; 1/N under every-N-layers, not 1). FSDP
/// (PerUnit) unshards a unit in its pre-backward hook and skips its forward pre-hook while in
/// PRE_BACKWARD, so a recomputed forward reuses the gathered weights: r = 0, checkpointed or not
/// (pytorch/pytorch torch/distributed/_composable/fsdp/_fsdp_state.py, FSDPState._pre_forward, at
/// 005da465b93443cc40d9e66d679637ada577f097: "the pre-backward hook is responsible for the unshard").
double zero3_refetch_share(const Problem& p, const ParallelConfig& cfg);

/// Exposed ZeRO-3 seconds of one micro-batch given the per-layer forward and backward compute
/// `x_f`, `x_b` and the framework's prefetch settings `k` (prefetch_depth 0 exposes everything).
/// With f the prefetch fraction, hidden_miss(c, x) = (1 - f) c + max(0, f c - x), k_g = 1 + r
/// gathers per layer in backward (r = `refetch_share`, zero3_refetch_share):
///   forward, prefetched (k.forward_prefetch)  = ag_ends + ag + (L-1) hidden_miss(ag, x_f)
///   forward, FSDP1 without forward_prefetch  = ag_ends + L ag
///   backward, BackwardPrefetch::Pre  = k_g ag + (L-1) hidden_miss(k_g ag + rs, x_b) + rs + rs_ends
///   backward, BackwardPrefetch::Post = L k_g ag + (L-1) max(0, rs - x_b) + rs + rs_ends
///   backward, BackwardPrefetch::None = L (k_g ag + rs) + rs_ends
/// The first gather of each pass and the last reduce-scatter have nothing to hide behind; why FSDP1's
/// settings expose what they do is core/framework_knobs.h BackwardPrefetch.
double zero3_exposed_s(const ShardedCollectives& c, double x_f, double x_b, double refetch_share,
                       const ShardingKnobs& k);

/// Total ZeRO-3 collective seconds of one micro-batch (both passes): (1 + r) L gathers in backward.
double zero3_total_s(const ShardedCollectives& c, double refetch_share);

}  // namespace meshplan
