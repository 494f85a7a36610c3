// Memory and time of Megatron-Core's selective recompute modules (core/recompute_modules.h) on the mean layer.
#pragma once
#include <cstdint>

#include "core/parallel_config.h"

namespace meshplan {

struct LayerForwardParts;

/// The module set in effect for `cfg`: the job's modules under --recompute selective with
/// Megatron's policy; 0 otherwise (none, full, torchtitan's policies, or no modules given: then
/// selective is Korthikanti's attention-core recompute, costmodel/ac_policy.h).
uint32_t active_recompute_modules(const Problem& p, const ParallelConfig& cfg);

/// Bytes the attention- and dense-side modules take off one mean layer's no-recompute stash, one
/// micro-batch, one GPU. T = b s / cp tokens, e bytes per element, q = bytes of an input a linear layer
/// keeps (costmodel/fp8.h fp8_stashed_input_bytes: e, or FP8's 1 + scales), t = tp, n = t with
/// sequence parallelism (else 1), r = the MoE-layer fraction (0 for dense models):
///   core_attn    A/t (activations.h: the attention core's stash)
///   layernorm    the outputs of the norms that are modules of their own (TE spec): MLA's input norm
///                q T h / n (what its down-projections keep) and the MoE layers' pre-MLP norm r e T h / n
///   mla_up_proj  e T ((a/t)(2 qk + v) + q_lora + kv_lora) (costmodel/mla_stash.h)
///   mlp          the dense layers' MLP, (1 - r) T (q h / n + (g e + q) f / t): its input (the fused
///                norm's output), its fc1 outputs (g = 2 gated, else 1) and the activation's output
/// The MoE-side modules (moe_act, moe, shared_experts) are moe_cost.h's.
double recompute_modules_dense_saving_bytes(const Problem& p, const ParallelConfig& cfg);

/// Seconds the same modules rerun in backward, one mean layer, one micro-batch:
///   core_attn    the attention core's forward (f.attention_core_s)
///   layernorm    each discarded norm's forward, memory bound: read and write e T h / n
///   mla_up_proj  the up-projection GEMMs (mla_stash.h) at the linear-layer peak, and RoPE and the
///                concatenation writing Q and K again, memory bound 2 e T (a/t)(2 qk + v)
///   mlp          (1 - r) x the dense MLP's GEMMs (g 2 T h f / t and 2 T f h / t) and its activation,
///                memory bound (g + 1) e T f / t
double recompute_modules_dense_s(const Problem& p, const ParallelConfig& cfg, const LayerForwardParts& f);

/// The largest tensor set one recomputed module re-creates at a time (the working set on top of the
/// stash): core_attn's A/t, mla_up_proj's discarded tensors, one dense MLP's.
double recompute_modules_working_bytes(const Problem& p, const ParallelConfig& cfg);

/// Forward FLOPs the modules rerun per mean layer for `sequences` x `seq` tokens (whole layer, all
/// TP ranks; for HFU): core_attn the attention core, mla_up_proj the up-projections, mlp (1 - r) x the
/// dense MLP's GEMMs, moe r x the routed experts and router, shared_experts r x the shared experts.
double recompute_modules_flops(const Problem& p, uint32_t modules, double sequences, double seq);

}  // namespace meshplan
