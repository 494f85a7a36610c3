// HBM bytes that Megatron-Core's alltoall token dispatcher moves around the experts (permutations).
#pragma once

namespace meshplan {

/// Bytes read + written by the token permutations of one MoE layer, one micro-batch, one GPU.
struct DispatchTraffic {
  double forward_bytes = 0;
  double backward_bytes = 0;
};

/// The alltoall dispatcher's data movement (megatron/core/transformer/moe/token_dispatcher.py and
/// moe_utils.py, NVIDIA/Megatron-LM commit d98e8a64), `routed` = rows of h elements this GPU sends
/// (load * k * T_local), `elem_bytes` per element, `etp` the ETP all-gather that multiplies the rows
/// the local experts see, `local_experts` = E/ep:
///  - permute 1 (dispatch_preprocess -> moe_utils.permute, an index_select of the routed rows):
///    read + write routed*h;
///  - permutation 2 (dispatch_postprocess -> sort_chunks_by_idxs, sorting the received chunks by
///    local expert; only when num_local_experts > 1): read + write routed*etp*h;
///  - its inverse in combine_preprocess (sort_chunks_by_idxs with restore_output_by_local_experts):
///    read + write routed*etp*h;
///  - unpermute (combine_postprocess: scatter_add of the routed rows into a zeroed T x h): read +
///    write routed*h (the T*h output is k times smaller and not counted apart).
/// The routing probabilities (one element per routed row) travel through the same permutations
/// (permute's probs, sort_chunks_by_idxs' probs): + routed*elem_bytes per pass. Backward: each
/// gather's gradient is the matching scatter over the same rows, so the same bytes again.
DispatchTraffic dispatch_traffic_bytes(double routed, double h, int etp, int local_experts, double elem_bytes);

}  // namespace meshplan
