// Context parallelism as PyTorch's experimental context_parallel runs it (torchtitan): all-gathered K/V
// with the query heads' width, fp32 dK/dV passed around a ring.
#pragma once
#include "costmodel/context_parallel.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// torch.distributed.tensor.experimental._attention (torch 2.6 release branch, Dec 2024; torchtitan
/// 9dec370 applies it with set_rotate_method("allgather") and leaves _ContextParallelOptions'
/// enable_load_balance = True, convert_to_f32 = True), per layer, micro-batch and GPU, L = s/cp:
/// - torchtitan's Llama attention expands K/V to the query heads (repeat_kv) before SDPA, so what is
///   exchanged has h_q = heads/tp heads, not kv_heads/tp: one chunk = 2 * e * b * L * h_q * d bytes.
/// - _templated_ring_attention: cp SDPA calls, the round-robin load balancer makes each half an L^2
///   block (as p2p); the all-gather of every rank's K/V chunk is issued at step 0 and waited for at
///   step 1: forward exposed = max(0, ag - step forward).
/// - _templated_ring_attention_backward gathers K/V again (exposed beyond step 0's backward) and passes
///   the fp32 dK/dV accumulator (2 * 4 * b * L * h_q * d bytes) to the next rank after every step
///   (_RotateMethod.ALL_TO_ALL permute), each waited for in the next step and the last after the loop:
///   backward exposed = max(0, ag - step backward) + (cp - 1) * max(0, send - step backward) + send.
/// Full recompute repeats the forward gather (layer_tp_comm's policy_cp_repeat_share).
/// The eager merge of the steps' partial results (torch_cp_merge_bytes) is added to the core's forward
/// and backward as memory-bound time.
CpAttention torch_all_gather_attention(const Problem& p, const ParallelConfig& cfg, double peak_flops_per_s,
                                       double element_bytes);

/// HBM bytes of the eager tensor ops around the cp SDPA calls of one layer, micro-batch and GPU, with
/// E = b L h_q d elements of its queries (and of its K/V, expanded), e the activation bytes, for the
/// rank that waits on the others (the last: every step i > 0 takes the whole local query, so nothing is
/// partial; the collectives join the ranks every layer). _ContextParallelOptions.convert_to_f32 = True.
/// Forward (_templated_ring_attention, _SDPAMerger): each step's block output cast to fp32 (e + 4),
/// every merge after the first out - sigmoid(lse' - lse) (out - out') as three fp32 ops (12 + 8 + 12),
/// K/V concatenated to be sent on every step but the last (4 e), the result cast back (4 + e):
///   forward  = [2 (e + 4) + (cp - 1)(36 + 5 e)] E                     (e = 2: 12 + 46 (cp - 1))
/// Backward (_templated_ring_attention_backward): fp32 zeros for dQ, dK, dV (12), K/V concatenated on
/// every step but the last (4 e), step 0 adds dK and dV (2 (8 + e)), later steps add into the first half
/// of each and re-concatenate it (_partial_update: 2 ((8 + e) / 2 + 8)), every step concatenates dK/dV
/// to send (16) and adds dQ (8 + e), then dQ and the received dK/dV are cast back ((4 + e) + 12):
///   backward = [12 + (16 + 2 e) + (4 + e) + 12 + (cp - 1)(24 + 5 e) + cp (24 + e)] E
///                                                                      (e = 2: 50 + 34 (cp - 1) + 26 cp)
/// (torch/distributed/tensor/experimental/_attention.py: the K/V rotation and the fp32 accumulation as
/// the torch 2.6 release branch has them.)
EagerBytes torch_cp_merge_bytes(int cp, double elements, double element_bytes);

}  // namespace meshplan
