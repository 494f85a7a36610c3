// Context parallelism (CP): each sequence split over cp ranks; the attention core's K/V exchange
// (ring p2p, all-gather or all-to-all) and its overlap with attention compute, per layer and micro-batch.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/attention.h"
#include "costmodel/collectives.h"

namespace meshplan {

/// Tokens of one sequence on one GPU: seq_len / cp. Every per-token term (linear layers,
/// element-wise kernels, TP collectives, activations, pipeline messages) uses it.
double cp_local_seq(const Problem& p, const ParallelConfig& cfg);

/// Ranks that reduce gradients together and shard ZeRO state: dp * cp. Megatron-Core reduces
/// gradients and shards the distributed optimizer over the data-parallel group *with* context
/// parallelism (parallel_state.get_data_parallel_group(with_context_parallel=True), used by
/// distributed_data_parallel.py and the distributed optimizer): CP ranks hold the same weights.
int grad_group_size(const ParallelConfig& cfg);

/// Megatron-Core rank order tp-cp-ep-dp-pp (parallel_state.py, order="tp-cp-ep-dp-pp"): the CP
/// group has stride tp, the DP-with-CP gradient group (size dp*cp) stride tp, PP stride tp*cp*dp.
GroupPlacement cp_group(const HardwareProfile& hw, const ParallelConfig& cfg);
GroupPlacement grad_group(const HardwareProfile& hw, const ParallelConfig& cfg);
int pp_group_stride(const ParallelConfig& cfg);

/// The attention core of one layer, one micro-batch, on one GPU under CP (cp > 1).
/// p2p (Megatron-Core cp_comm_type "p2p", Transformer Engine AttnFuncWithCPAndKVP2P, ring attention):
///   cp steps; step i computes the local queries against the K/V chunk received in step i-1 while
///   the next chunk travels one hop of the ring. With causal load balancing (sequence cut into 2cp
///   chunks, rank r holding chunks r and 2cp-1-r) every step computes half a (s/cp)^2 block, the
///   work of one causal block of s/cp tokens: step time = attention_core_time(s/cp).
///   forward exposed  = (cp - 1) * max(0, t(K/V) - step forward)
///   backward exposed = (cp - 1) * max(0, t(K/V + dK/dV) - step backward) + t(dK/dV)  (the last
///                      dK/dV hop back to its owner has nothing left to hide behind)
/// all_gather (cp_comm_type "all_gather", AttnFuncWithCPAndKVAllGather; Llama 3's choice with GQA):
///   K/V all-gathered before attention (exposed), gathered again and dK/dV reduce-scattered in
///   backward (exposed); compute as for p2p.
/// a2a (cp_comm_type "a2a", DeepSpeed Ulysses, AttnFuncWithCPAndQKVOA2A): all-to-all of Q, K, V
///   before and of O after attention (backward: dO, then dQ, dK, dV), all exposed; attention then
///   runs on the whole sequence with heads / (tp * cp).
/// torch_all_gather (PyTorch's experimental context_parallel, torchtitan): costmodel/cp_torch_allgather.h.
/// K/V bytes of one chunk: 2 (K and V) * e * b * (s/cp) * kv_dim / tp.
struct CpAttention {
  AttentionCoreTime core;            // compute of all steps (what replaces the cp = 1 core time)
  AttentionCoreTime step;            // one ring step (p2p, all_gather); core itself for a2a
  int steps = 1;                     // ring steps (cp for p2p and all_gather, 1 for a2a)
  double kv_chunk_bytes = 0;         // K and V of one local chunk, bytes per GPU
  double step_comm_forward_s = 0;    // p2p: one K/V hop; all_gather/a2a: the forward collective(s)
  double step_comm_backward_s = 0;   // p2p: one K/V + dK/dV hop; else the backward collectives
  double forward_exposed_s = 0;      // communication not hidden behind attention compute
  double backward_exposed_s = 0;
};

CpAttention cp_attention(const Problem& p, const ParallelConfig& cfg, double peak_flops_per_s, double element_bytes);

/// The compute of a ring (p2p, all_gather, torch_all_gather): `steps` = cp, `step` = one causal block of
/// s/cp tokens (windowed layers costed as full: the window follows global positions), `core` = cp steps.
/// The exchange fields are left 0 for the caller.
CpAttention cp_ring_compute(const Problem& p, const ParallelConfig& cfg, double peak_flops_per_s,
                            double element_bytes);

}  // namespace meshplan
