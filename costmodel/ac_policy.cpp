// Activation-checkpoint policies: per-layer stash, working set, recomputed time and FLOPs
// (costmodel/README.md "Activation-checkpoint policies").
#include "costmodel/ac_policy.h"

#include <algorithm>

#include "core/recompute_modules.h"

#include "costmodel/activations.h"
#include "costmodel/attention.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/executor_stash.h"
#include "costmodel/fp8.h"
#include "costmodel/recompute_modules.h"

namespace meshplan {

LayerMix layer_mix(const AcPolicy& policy, Recompute r) {
  LayerMix m;
  if (r == Recompute::Selective && policy.kind == AcPolicyKind::TorchtitanOp) {
    m.op = 1.0;
  } else if (r == Recompute::Full && policy.kind == AcPolicyKind::EveryNLayers && policy.every_n_layers > 1) {
    m.full = 1.0 / static_cast<double>(policy.every_n_layers);
    m.none = 1.0 - m.full;
  } else {
    switch (r) {
      case Recompute::None: m.none = 1.0; break;
      case Recompute::Selective: m.selective = 1.0; break;
      case Recompute::Full: m.full = 1.0; break;
    }
  }
  return m;
}

double recomputed_layer_share(const AcPolicy& policy, Recompute r) { return layer_mix(policy, r).full; }

double op_sac_stash_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, double e, AttentionKind k) {
  const double t = static_cast<double>(tp);
  const double T = b * s;
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.q_dim());  // h unless head_dim is set apart
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.intermediate_size);
  const bool gated = m.mlp == MlpKind::Gated;
  double bytes = e * T * h / (sp ? t : 1.0);                 // block input
  bytes += e * T * (q + kv) / t;                             // wq (mm 1), wv (mm 3)
  bytes += e * T * q / t + attention_core_stash_bytes(m, k, b, s, e) / t;  // SDPA output and LSE
  bytes += e * T * f / t;                                    // w1 / up (mm 5)
  if (gated) bytes += e * T * h;                             // w2 (mm 7): partial sums, whole width
  if (sp && tp > 1) bytes += 2.0 * e * T * h / t;            // the two reduce_scatter outputs
  return bytes;
}

OpSacGemmFlops op_sac_recompute_gemm_flops(const ModelSpec& m, double b, double s) {
  const double T = b * s;
  const double h = static_cast<double>(m.hidden_size);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.intermediate_size);
  OpSacGemmFlops g;
  g.k_proj = 2.0 * T * h * kv;  // mm 2
  g.out_proj = 2.0 * T * static_cast<double>(m.q_dim()) * h; // mm 4
  g.mlp = 2.0 * T * h * f;      // mm 6: w3 (gated) or down (plain), same FLOPs
  return g;
}

namespace {
struct StashArgs {
  double b = 0, s = 0, e = 0;
  int t = 1;
  bool sp = false;
  AttentionKind k = AttentionKind::Fused;
  double fp8_delta = 0;  // FP8 GEMM inputs kept in place of 16-bit ones (none/selective; costmodel/fp8.h)
  double bf16_stash_saving = 0;  // meshplan's executor: h1, h2, act, q, k, v, att in bf16 (executor_stash.h)
};

StashArgs stash_args(const Problem& p, const ParallelConfig& cfg) {
  StashArgs a;
  a.b = static_cast<double>(cfg.micro_batch_size);
  a.s = cp_local_seq(p, cfg);  // seq / cp
  a.e = activation_element_bytes(p.job.dtype);
  a.t = cfg.tp;
  a.sp = cfg.sequence_parallel;
  a.k = p.job.knobs.attention;
  a.fp8_delta = fp8_stash_delta_bytes(p, cfg, Recompute::None);  // the same for selective, 0 for full
  if (p.job.knobs.executor_bf16_gemm_stash)
    a.bf16_stash_saving = executor_bf16_stash_saving_bytes(p.model, a.b, a.s, a.t, a.sp, a.e);
  if (p.job.knobs.executor_bf16_attention_stash && cfg.cp <= 1)
    a.bf16_stash_saving += executor_bf16_attention_saving_bytes(p.model, a.b, a.s, a.t, a.e);
  return a;
}

double korthikanti(const ModelSpec& m, const StashArgs& a, Recompute r) {
  return layer_activation_bytes(m, a.b, a.s, a.t, a.sp, r, a.e, a.k) +
         (r == Recompute::Full ? 0.0 : a.fp8_delta - a.bf16_stash_saving);
}
}  // namespace

// Only the shares present are evaluated, so a single share of 1 returns its term bit for bit.
double policy_layer_activation_bytes(const Problem& p, const ParallelConfig& cfg) {
  const LayerMix w = layer_mix(p.job.ac_policy, cfg.recompute);
  const StashArgs a = stash_args(p, cfg);
  double bytes = 0.0;
  if (w.none > 0) bytes += w.none * korthikanti(p.model, a, Recompute::None);
  if (w.selective > 0)  // Megatron-Core's recompute modules, when given, in place of Korthikanti's selective
    bytes += w.selective * (active_recompute_modules(p, cfg) != 0
                                ? korthikanti(p.model, a, Recompute::None) - recompute_modules_dense_saving_bytes(p, cfg)
                                : korthikanti(p.model, a, Recompute::Selective));
  if (w.full > 0) bytes += w.full * korthikanti(p.model, a, Recompute::Full);
  if (w.op > 0) bytes += w.op * op_sac_stash_bytes(p.model, a.b, a.s, a.t, a.sp, a.e, a.k);
  return bytes;
}

double policy_working_bytes(const Problem& p, const ParallelConfig& cfg) {
  const LayerMix w = layer_mix(p.job.ac_policy, cfg.recompute);
  const StashArgs a = stash_args(p, cfg);
  // Full recompute re-creates the layer's no-recompute stash, FP8 inputs included.
  auto working = [&](Recompute r) {
    return recompute_working_bytes(p.model, a.b, a.s, a.t, a.sp, r, a.e, a.k) +
           (r == Recompute::Full ? a.fp8_delta - a.bf16_stash_saving : 0.0);
  };
  double bytes = 0.0;
  if (w.selective > 0)
    bytes = std::max(bytes, active_recompute_modules(p, cfg) != 0 ? recompute_modules_working_bytes(p, cfg)
                                                                  : working(Recompute::Selective));
  if (w.full > 0) bytes = std::max(bytes, working(Recompute::Full));
  if (w.op > 0)
    bytes = std::max(bytes, korthikanti(p.model, a, Recompute::None) -
                                op_sac_stash_bytes(p.model, a.b, a.s, a.t, a.sp, a.e, a.k));
  return bytes;
}

double policy_recompute_s(const Problem& p, const ParallelConfig& cfg, const LayerForwardParts& f) {
  const LayerMix w = layer_mix(p.job.ac_policy, cfg.recompute);
  double seconds = 0.0;
  if (w.selective > 0)
    seconds += w.selective * (active_recompute_modules(p, cfg) != 0 ? recompute_modules_dense_s(p, cfg, f)
                                                                    : f.attention_core_s);
  if (w.full > 0) seconds += w.full * f.forward_s;
  if (w.op > 0) {
    const double t = static_cast<double>(cfg.tp);
    const OpSacGemmFlops g =
        op_sac_recompute_gemm_flops(p.model, static_cast<double>(cfg.micro_batch_size), cp_local_seq(p, cfg));
    const HardwareProfile& hw = p.hardware;
    seconds += w.op * (gemm_time_s(hw, f.linear_peak, g.k_proj / t) + gemm_time_s(hw, f.linear_peak, g.out_proj / t) +
                       gemm_time_s(hw, f.linear_peak, g.mlp / t) + f.elementwise_s);
  }
  return seconds;
}

double policy_tp_recompute_s(const Problem& p, const ParallelConfig& cfg, double forward_s, double collective_s) {
  const LayerMix w = layer_mix(p.job.ac_policy, cfg.recompute);
  double seconds = 0.0;
  if (w.full > 0) seconds += w.full * forward_s;
  if (w.op > 0) seconds += w.op * (cfg.sequence_parallel ? 2.0 * collective_s : collective_s);
  return seconds;
}

double policy_cp_repeat_share(const Problem& p, const ParallelConfig& cfg) {
  const LayerMix w = layer_mix(p.job.ac_policy, cfg.recompute);
  // Recompute modules without core_attn rerun no attention, so no K/V exchange either.
  const uint32_t modules = active_recompute_modules(p, cfg);
  const double selective = modules != 0 && !(modules & kRecomputeCoreAttn) ? 0.0 : w.selective;
  return selective + w.op + w.full;
}

StepFlops policy_step_flops(const Problem& p, Recompute r, double sequences, double seq) {
  const AttentionKind k = p.job.knobs.attention;
  if (p.job.ac_policy.kind == AcPolicyKind::Megatron && r == Recompute::Selective && p.job.knobs.recompute_modules != 0) {
    StepFlops out = step_flops(p.model, sequences, seq, Recompute::None, k);  // + the modules' reruns
    out.hardware += static_cast<double>(p.model.num_layers + p.model.mtp_layers) *
                    recompute_modules_flops(p, p.job.knobs.recompute_modules, sequences, seq);
    return out;
  }
  if (p.job.ac_policy.kind == AcPolicyKind::Megatron) return step_flops(p.model, sequences, seq, r, k);
  const LayerMix w = layer_mix(p.job.ac_policy, r);
  const LayerFlops layer = layer_forward_flops(p.model, sequences, seq);
  StepFlops out = step_flops(p.model, sequences, seq, Recompute::None, k);
  const double per_layer = w.selective * recompute_flops(layer, Recompute::Selective) +
                           w.full * recompute_flops(layer, Recompute::Full) +
                           w.op * op_sac_recompute_gemm_flops(p.model, sequences, seq).total();
  out.hardware += static_cast<double>(p.model.num_layers) * per_layer;
  return out;
}

}  // namespace meshplan
