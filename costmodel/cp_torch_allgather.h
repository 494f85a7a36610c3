// Context parallelism as PyTorch's experimental context_parallel runs it (torchtitan): all-gathered K/V
// with the query heads' width, fp32 dK/dV passed around a ring.
#pragma once
#include "costmodel/context_parallel.h"

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
/// Not counted: the fp32 merge of partial outputs (a few bytes per output element per step).
CpAttention torch_all_gather_attention(const Problem& p, const ParallelConfig& cfg, double peak_flops_per_s,
                                       double element_bytes);

}  // namespace meshplan
