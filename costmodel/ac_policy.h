// Memory and recompute time of the activation-checkpoint policies (core/ac_policy.h): torchtitan's
// op-level selective AC and its every-N-layers AC, next to Korthikanti's selective and full.
#pragma once
#include "core/ac_policy.h"
#include "core/parallel_config.h"
#include "costmodel/flops.h"

namespace meshplan {

/// Shares of a stage's layers by what they keep for backward (they sum to 1): `none` stash
/// everything, `selective` recompute the attention core (Korthikanti 2022), `full` keep only their
/// input and rerun the whole forward, `op` follow torchtitan's op-level policy. Megatron gives one
/// share 1 for each mode; every-N-layers with recompute full gives full = 1/N, none = 1 - 1/N
/// (torchtitan checkpoints the N-th, 2N-th, ... block a rank builds: floor(L/N) of its L blocks,
/// L/N when N divides L); torchtitan-op with recompute selective gives op = 1.
struct LayerMix {
  double none = 0, selective = 0, full = 0, op = 0;
};
LayerMix layer_mix(const AcPolicy& policy, Recompute r);

/// Share of a stage's layers whose whole forward reruns in backward (layer_mix(...).full): 1 for
/// --recompute full under megatron or torchtitan-op, 1/N under every-N-layers (only every N-th
/// block is checkpointed; the others keep their activations and rerun nothing), 0 for none and
/// selective. Whatever repeats with a layer's forward follows this share, not `recompute == full`:
/// DeepSpeed's ZeRO-3 re-fetch (zero3_refetch_share, costmodel/zero_comm.h) and the MoE
/// dispatch/combine all-to-all (costmodel/moe_cost.h, step_costs' ep_comm_backward_s).
double recomputed_layer_share(const AcPolicy& policy, Recompute r);

/// torchtitan op-level SAC (torchtitan/parallelisms/parallelize_llama.py `_save_list` and
/// `_custom_policy` at commit 9dec370ad26b5f8e9a7333a0e36165018262644b, 2024-12-26; the same list
/// at 1ea476e9f24be439eda358aa864f45c1c37a8a88, 2024-04-24, and 820504e20d1149fbf0b98c567af24c4b0433b22d,
/// 2025-06-13, torchtitan/models/llama3/parallelize_llama.py). A block's aten.mm calls are counted
/// from 1 per block forward; the outputs of the odd-numbered ones, of SDPA (flash/efficient), of
/// reduce_scatter_tensor and of max are saved, every other op is recomputed in backward. A Llama
/// block runs wq, wk, wv, wo, w1, w3, w2 (model.py: xq, xk, xv = wq(x), wk(x), wv(x); w2(silu(w1(x))
/// * w3(x))): saved wq, wv, w1, w2; recomputed wk, wo, w3. A plain MLP (up, down): saved wq, wv, up;
/// recomputed wk, wo, down.
/// Stashed bytes of one layer for b sequences of s tokens, T = b s, e bytes per element, t = tp:
///   block input            e T h / (SP ? t : 1)      (the checkpoint's input)
///   Q (wq), V (wv)         e T (h + kv) / t
///   SDPA output + LSE      e T h / t + core/t       (core: attention_core_stash_bytes, fused: 4 a T)
///   MLP up (w1 / up)       e T f / t
///   w2 output (gated)      e T h                    (row-parallel: partial sums of the whole width
///                                                    before the reduce-scatter, not divided by t)
///   reduce-scatter outputs 2 e T h / t              (SP with t > 1: after wo and after w2/down)
/// For Llama-3-8B (h 4096, kv 1024, f 14336), t = 1: e T (4h + kv + f) + 4aT = 31744 e T + 128 T,
/// against 69632 e T + 128 T without recompute.
double op_sac_stash_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, double e,
                          AttentionKind attention);

/// Forward FLOPs (whole layer, not divided by TP) of the matmuls op-level SAC reruns in backward:
/// the K projection 2 T h kv, the out-projection 2 T h^2 and the third MLP GEMM (gated: w3,
/// 2 T h f; plain: down, 2 T f h).
struct OpSacGemmFlops {
  double k_proj = 0, out_proj = 0, mlp = 0;
  double total() const { return k_proj + out_proj + mlp; }
};
OpSacGemmFlops op_sac_recompute_gemm_flops(const ModelSpec& m, double b, double s);

/// Stashed activation bytes of one layer, one micro-batch, on one GPU under the job's policy and
/// cfg.recompute: the layer_mix-weighted sum of layer_activation_bytes (none, selective, full) and
/// op_sac_stash_bytes (dense part; MoE expert stash is added by layer_activation_bytes_for).
double policy_layer_activation_bytes(const Problem& p, const ParallelConfig& cfg);

/// Working set of the layer being recomputed (once per stage): the largest of the shares present:
/// recompute_working_bytes for selective and full, and for op the tensors it recomputes, i.e. the
/// no-recompute stash less the op stash (at least 0).
double policy_working_bytes(const Problem& p, const ParallelConfig& cfg);

/// Forward seconds of one layer, one micro-batch, one GPU, as costmodel/compute_time.cpp splits them.
struct LayerForwardParts {
  double forward_s = 0;         // the whole forward (what full recompute reruns)
  double attention_core_s = 0;  // the attention core (what Korthikanti selective reruns)
  double elementwise_s = 0;     // norms, residual adds, activation function, FP8 casts, unpadding
  double linear_peak = 0;       // FLOP/s peak of the linear GEMMs (fp8 under an FP8 recipe)
};

/// LayerCompute::recompute_s: none 0, selective the attention core, full the whole forward, op
/// the three recomputed GEMMs (op_sac_recompute_gemm_flops / t through the profile's GEMM
/// efficiency) plus all forward element-wise work; weighted by layer_mix.
double policy_recompute_s(const Problem& p, const ParallelConfig& cfg, const LayerForwardParts& f);

/// LayerComm::recompute_s of the TP collectives: full reruns the forward's collectives
/// (`forward_s`); op reruns what is not saved and is needed again: with SP the 2 all-gathers of the
/// column-parallel inputs (all_gather_into_tensor is not in the save list), without SP the
/// out-projection's all-reduce (the residual stream needs it; the MLP's is past the last tensor
/// backward needs, where non-reentrant recompute stops). `collective_s`: one all-gather (SP) or
/// one all-reduce.
double policy_tp_recompute_s(const Problem& p, const ParallelConfig& cfg, double forward_s, double collective_s);

/// Share of a layer's other forward communication (context-parallel K/V exchange, MoE dispatch) that
/// recompute repeats: the selective, op and full shares for the CP exchange (op SAC reruns the
/// all-gather inside ring attention, it only caches the SDPA outputs); `full` alone for MoE.
double policy_cp_repeat_share(const Problem& p, const ParallelConfig& cfg);

/// Step FLOPs under the policy: step_flops without recompute plus L x the mix-weighted recomputed
/// forward FLOPs (op: op_sac_recompute_gemm_flops). Megatron: step_flops(cfg.recompute) itself.
StepFlops policy_step_flops(const Problem& p, Recompute r, double sequences, double seq);

}  // namespace meshplan
