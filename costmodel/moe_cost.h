// Mixture-of-experts costs of the mean layer: FLOPs with active experts, grouped expert GEMMs on the
// busiest rank, token dispatch/combine all-to-all, stashed activations, expert-gradient reduction.
#pragma once
#include "core/hardware_profile.h"
#include "core/parallel_config.h"
#include "costmodel/compute_time.h"
#include "costmodel/flops.h"

namespace meshplan {

/// Rewrites `f` (one layer, whole layer, forward) for MoE and MLA models; dense models unchanged.
/// MoE, weighted by the MoE-layer fraction r: mlp_up/mlp_down become the TP-split part (dense
/// layers' MLP (1-r) and shared experts r); expert_up/expert_down = r * k * (one expert's GEMMs on
/// every token), router = r * 2 T h E. Only the k experts a token visits count: the
/// "6 * active parameters * tokens" basis. MLA (DeepSeek-V2/V3): projections 2 T (attention
/// parameters), Q K^T with heads of qk_nope + qk_rope, P V with v_head_dim.
void add_moe_and_mla_flops(const ModelSpec& m, double sequences, double seq, LayerFlops& f);

/// Tokens one GPU feeds its MoE layers per micro-batch: b*s/(tp*cp) (sequence parallelism, which
/// Megatron-Core requires for MoE with tp > 1, shards them over TP; CP over cp).
double moe_local_tokens(const Problem& p, const ParallelConfig& cfg);

/// Tokens of the busiest expert relative to the mean: Job::moe_imbalance, capped by a capacity
/// factor when one is set (Megatron-Core drops the tokens above capacity = tokens*k*factor/E before
/// the dispatch, moe/README.md "token drop"); dropless (0) keeps the imbalance.
double moe_load_factor(const Job& job);

/// torchtitan's routed experts under torchao's MXFP8 grouped-GEMM converter on a profile that measured its
/// speedup (HardwareProfile::torch_grouped_mm_mxfp8_speedup): costed as the bf16 grouped GEMM over that
/// speedup, quantization included.
bool torch_grouped_mm_mxfp8_measured(const Problem& p);

/// Seconds of the routed experts of the mean layer on the busiest GPU, one micro-batch: E/ep local
/// experts, each a grouped-GEMM member of M = load * k * T_local * ep * etp / E tokens x h x
/// f_e/etp, timed on the profile's GEMM-efficiency curve at that size (small experts run far below
/// peak) at the linear-layer peak (FP8 under an FP8 recipe: TE GroupedLinear); router GEMM
/// T_local x h x E at the 16-bit peak; the dispatcher's permutations (costmodel/moe_dispatch_traffic.h)
/// and the expert activation function memory bound. Added to `c` (forward, dX, dW, and recompute
/// under full recompute). The forward's part after the token dispatch (the local experts' GEMMs, their
/// activation function and the permutations, r-weighted) also goes to c.expert_forward_s, which
/// costmodel/host_launch.h weighs against the host's post-sync issue time.
void add_expert_compute(const Problem& p, const ParallelConfig& cfg, LayerCompute& c);

/// One all-to-all of `bytes` (each rank's send buffer) over an EP group of `n` ranks `stride`
/// ranks apart. Peers inside the NVLink domain (HardwareProfile::nvlink_domain()) are reached over
/// intra_node links, the others over inter_node; both tiers run concurrently, so the slower sets the
/// time: max(in-domain share / intra bw, out-of-domain share / inter bw) + one latency per tier
/// used (NCCL issues the n-1 sends as one group, progressed concurrently).
double alltoall_s(const HardwareProfile& hw, int n, int stride, double bytes);

/// Token dispatch + combine of the mean layer for one micro-batch, seconds, on the busiest rank:
/// dispatch = all-to-all of load*k*T_local*h activations over the EP group, a second all-to-all of
/// their load*k*T_local probabilities (+ all-gather over the ETP group), combine = its mirror (reduce-scatter + all-to-all); forward dispatch + combine,
/// backward the same again, full recompute once more. Megatron-Core runs them on the critical path
/// (the alltoall dispatcher; overlap needs --overlap-moe-expert-parallel-comm), so all is exposed.
/// Added to `comm` (forward_s, backward_s, recompute_s).
void add_expert_comm(const Problem& p, const ParallelConfig& cfg, LayerComm& comm);

/// The stashed activations of one mean layer, one micro-batch, one GPU: layer_activation_bytes plus,
/// for MoE, r * (busiest rank's dispatched tokens k*T_local*h*etp, expert intermediates
/// k*T_local*f_e*(3 gated | 2), fp32 router logits and probabilities 8*T_local*E, shared experts
/// T_local*f_s*(3|2)) minus the dense MLP those layers do not have; under a TE FP8 recipe the GEMM
/// inputs (dispatched rows, activation output) at the quantized width (costmodel/fp8.h
/// fp8_stashed_input_bytes); less what Megatron-Core's recompute modules discard (moe_act, shared_experts,
/// moe; costmodel/recompute_modules.h). Full recompute keeps only the layer input (no change).
double layer_activation_bytes_for(const Problem& p, const ParallelConfig& cfg);

/// Expert-gradient reduction of pipeline rank `stage` over the expert-data-parallel group
/// (edp = tp*cp*dp/(ep*etp), ranks ep*etp apart): ZeRO-0 all-reduce, ZeRO-1 reduce-scatter +
/// all-gather of the updated weights, ZeRO-2 one reduce-scatter per micro-batch. Added to the DP
/// totals: what backward (beyond the dense reduction hidden under it) cannot hide is exposed.
void add_expert_grad_sync(const Problem& p, const ParallelConfig& cfg, int stage, double backward_s,
                          double& total_s, double& exposed_s);

/// The expert-gradient reduction of one model chunk (step_costs' dp_reduce_s), seconds, and its bytes.
double expert_chunk_reduce_s(const Problem& p, const ParallelConfig& cfg, int chunk);
double expert_chunk_grad_bytes(const Problem& p, const ParallelConfig& cfg, int chunk);

}  // namespace meshplan
