// MoE and MLA costs of the mean layer (costmodel/moe_cost.h).
#include "costmodel/moe_cost.h"

#include "costmodel/moe_dedup_dispatch.h"

#include <algorithm>

#include "core/moe_config.h"
#include "core/recompute_modules.h"
#include "costmodel/ac_policy.h"
#include "costmodel/activations.h"
#include "costmodel/collectives.h"
#include "costmodel/context_parallel.h"
#include "costmodel/expert_fsdp.h"
#include "costmodel/fp8.h"
#include "costmodel/moe_dedup_dispatch.h"
#include "costmodel/moe_dispatch_traffic.h"
#include "costmodel/moe_layout.h"
#include "costmodel/pipeline.h"
#include "costmodel/recompute_modules.h"

namespace meshplan {

namespace {
double gated_mats(const ModelSpec& m) { return m.mlp == MlpKind::Gated ? 2.0 : 1.0; }  // up (+ gate)
double stash_factor(const ModelSpec& m) { return m.mlp == MlpKind::Gated ? 3.0 : 2.0; }
double d(int64_t v) { return static_cast<double>(v); }
}  // namespace

void add_moe_and_mla_flops(const ModelSpec& m, double sequences, double seq, LayerFlops& f) {
  const double T = sequences * seq;
  const double h = d(m.hidden_size);
  if (m.mla.enabled()) {
    const double a = d(m.num_heads);
    const double qk = d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    const double v = d(m.mla.v_head_dim);
    f.out_proj = 2.0 * T * a * v * h;
    f.qkv = 2.0 * T * std::max(0.0, m.attention_parameters() - a * v * h);  // low-rank Q, KV factors
    f.scores = 2.0 * sequences * seq * seq * a * qk;
    f.values = 2.0 * sequences * seq * seq * a * v;
  }
  if (!m.moe.enabled()) return;
  const MoeSpec& e = m.moe;
  const double r = moe_layer_fraction(m);
  const double shared_f = d(e.num_shared_experts) * d(e.shared_expert_intermediate_size);
  const double k = d(e.experts_per_token);
  const double fe = d(e.expert_intermediate_size);
  f.mlp_up = (1.0 - r) * f.mlp_up + r * gated_mats(m) * 2.0 * T * h * shared_f;
  f.mlp_down = (1.0 - r) * f.mlp_down + r * 2.0 * T * shared_f * h;
  f.expert_up = r * k * gated_mats(m) * 2.0 * T * h * fe;
  f.expert_down = r * k * 2.0 * T * fe * h;
  f.router = r * 2.0 * T * h * d(e.num_experts);
}

double moe_local_tokens(const Problem& p, const ParallelConfig& cfg) {
  return d(cfg.micro_batch_size) * d(p.job.seq_len) / (static_cast<double>(cfg.tp) * std::max(1, cfg.cp));
}

double moe_load_factor(const Job& job) {
  const double imbalance = std::max(1.0, job.moe_imbalance);
  return job.moe_capacity_factor > 0.0 ? std::min(imbalance, std::max(1.0, job.moe_capacity_factor)) : imbalance;
}

bool torch_grouped_mm_mxfp8_measured(const Problem& p) {
  return p.job.knobs.torch_grouped_mm && p.job.fp8 == Fp8Recipe::Mxfp8 &&
         p.hardware.torch_grouped_mm_relative_efficiency > 0.0 && p.hardware.torch_grouped_mm_mxfp8_speedup > 0.0;
}

namespace {
// One mean layer's routed-expert parts, seconds per micro-batch before the weighting by r.
struct ExpertTimes {
  double gemms = 0, gemms_backward = 0, router = 0, act = 0, perm_forward = 0, perm_backward = 0;
};

ExpertTimes expert_times(const Problem& p, const ParallelConfig& cfg) {
  const ModelSpec& m = p.model;
  const HardwareProfile& hw = p.hardware;
  const double peak = job_peak_flops(p);
  const double expert_peak = linear_gemm_peak(p, peak);  // TE GroupedLinear runs in FP8 under fp8_autocast
  const double E = d(m.moe.num_experts), k = d(m.moe.experts_per_token);
  const double h = d(m.hidden_size), fe = d(m.moe.expert_intermediate_size) / cfg.etp;
  const double T = moe_local_tokens(p, cfg);
  const double load = moe_load_factor(p.job);
  const double local_experts = E / cfg.ep;
  const double tokens_per_expert = load * k * T * cfg.ep * cfg.etp / E;
  // Each local expert's GEMM is timed at the efficiency of its own (tokens_per_expert x h x f_e/etp)
  // shape, back to back. That is what TE's GroupedLinear does on Hopper by default: one cuBLAS GEMM
  // per expert over 4 streams (TransformerEngine cublaslt_gemm.cu multi_stream_cublas_gemm; CUTLASS's
  // single grouped kernel only with NVTE_USE_CUTLASS_GROUPED_GEMM=1). Stream concurrency is not credited.
  auto experts_at = [&](double gemm_peak) {
    return local_experts * (gemm_time_s(hw, gemm_peak, gated_mats(m) * 2.0 * tokens_per_expert * h * fe) +
                            gemm_time_s(hw, gemm_peak, 2.0 * tokens_per_expert * fe * h));
  };
  // torchtitan runs one torch._grouped_mm per projection over the local experts ([T] models/common/moe.py
  // _grouped_mm), at the profile's measured share of the dense curve's rate; torchao's MXFP8 converter swaps
  // in its quantize-then-scaled grouped GEMM, the measured speedup over bf16 with its casts inside
  // (costmodel/README.md "Grouped GEMMs of torch"). Not measured: the dense curve's rate.
  const double grouped = p.job.knobs.torch_grouped_mm ? hw.torch_grouped_mm_relative_efficiency : 0.0;
  const double eff = grouped > 0.0 ? grouped : 1.0;
  ExpertTimes t;
  if (grouped > 0.0 && torch_grouped_mm_mxfp8_measured(p)) {
    t.gemms = t.gemms_backward = experts_at(peak) / eff / hw.torch_grouped_mm_mxfp8_speedup;
  } else {
    t.gemms = experts_at(expert_peak) / eff;
    t.gemms_backward = experts_at(linear_gemm_backward_peak(p, peak)) / eff;  // dgrad, wgrad (fp8.h)
  }
  t.router = gemm_time_s(hw, peak, 2.0 * T * h * E);
  // The dispatcher's permutations (costmodel/moe_dispatch_traffic.h); the activation function reads
  // the gate/up outputs and writes its output (6 bytes per intermediate element gated, 4 plain),
  // over the routed*etp rows the local experts see.
  const double routed = load * k * T;
  const DispatchTraffic perm =
      dispatch_traffic_bytes(routed, h, cfg.etp, static_cast<int>(local_experts), activation_element_bytes(p.job.dtype));
  t.act = memory_bound_time_s(hw, (stash_factor(m) * 2.0) * routed * cfg.etp * fe);
  t.perm_forward = memory_bound_time_s(hw, perm.forward_bytes);
  t.perm_backward = memory_bound_time_s(hw, perm.backward_bytes);
  return t;
}
}  // namespace

void add_expert_compute(const Problem& p, const ParallelConfig& cfg, LayerCompute& c) {
  const ModelSpec& m = p.model;
  if (!m.moe.enabled()) return;
  const HardwareProfile& hw = p.hardware;
  const double r = moe_layer_fraction(m);
  const ExpertTimes t = expert_times(p, cfg);
  const double fwd = r * (t.gemms + t.router + t.act + t.perm_forward);
  c.forward_s += fwd;
  c.expert_forward_s += r * (t.gemms + t.act + t.perm_forward);
  c.dx_gemm_s += r * (t.gemms_backward + t.router);
  c.backward_input_s += r * (t.gemms_backward + t.router + 2.0 * t.act + t.perm_backward);
  c.backward_weight_s += r * (t.gemms_backward + t.router);
  c.recompute_s += recomputed_layer_share(p.job.ac_policy, cfg.recompute) * fwd;  // costmodel/ac_policy.h
  // Megatron-Core's recompute modules (core/recompute_modules.h): moe_act reruns the activation, moe the
  // whole MoE layer (its shared experts too), shared_experts those alone (their GEMMs, TP-split).
  const uint32_t modules = active_recompute_modules(p, cfg);
  const double expert_peak = linear_gemm_peak(p, job_peak_flops(p));
  const double T = moe_local_tokens(p, cfg), h = d(m.hidden_size);
  const double fs = d(m.moe.num_shared_experts) * d(m.moe.shared_expert_intermediate_size);
  const double shared = gemm_time_s(hw, expert_peak, gated_mats(m) * 2.0 * T * h * fs) +
                        gemm_time_s(hw, expert_peak, 2.0 * T * fs * h);
  if (modules & kRecomputeMoe) c.recompute_s += fwd + r * shared;
  else {
    if (modules & kRecomputeMoeAct) c.recompute_s += r * t.act;
    if (modules & kRecomputeSharedExperts) c.recompute_s += r * shared;
  }
}

double alltoall_s(const HardwareProfile& hw, int n, int stride, double bytes) {
  if (n <= 1 || bytes <= 0.0) return 0.0;
  const int D = std::max(1, hw.nvlink_domain());
  stride = std::max(1, stride);
  const int per_domain = stride >= D ? 1 : std::min(n, D / stride);
  const double share = bytes / n;
  const double in_peers = per_domain - 1, out_peers = n - per_domain;
  const double intra = in_peers * share / (hw.intra_node.bandwidth_bytes_per_s * hw.intra_node.efficiency);
  const double inter = out_peers > 0 ? out_peers * share / (hw.inter_node.bandwidth_bytes_per_s * hw.inter_node.efficiency)
                                     : 0.0;
  return std::max(intra, inter) + (in_peers > 0 ? hw.intra_node.latency_s : 0.0) +
         (out_peers > 0 ? hw.inter_node.latency_s : 0.0);
}

void add_expert_comm(const Problem& p, const ParallelConfig& cfg, LayerComm& comm) {
  const ModelSpec& m = p.model;
  if (!m.moe.enabled() || (cfg.ep <= 1 && cfg.etp <= 1)) return;
  const HardwareProfile& hw = p.hardware;
  const double r = moe_layer_fraction(m);
  const double bytes = moe_load_factor(p.job) * d(m.moe.experts_per_token) * moe_local_tokens(p, cfg) *
                       d(m.hidden_size) * activation_element_bytes(p.job.dtype);
  // The dispatch sends the routed rows and, as a second all_to_all, their probabilities (one
  // element per row; token_dispatcher.py token_dispatch, global_probs); the combine only the rows.
  const double probs_bytes = bytes / d(m.hidden_size);
  // The flex dispatcher (DeepEP, HybridEP) sends each token once per destination GPU and domain, its
  // routing weights inside the same kernel (costmodel/moe_dedup_dispatch.h); the alltoall dispatcher
  // every (token, expert) row and then the probabilities.
  const bool flex = p.job.knobs.moe_dispatcher != MoeDispatcher::AllToAll;
  const double a2a = flex ? dedup_dispatch_s(p, cfg, moe_load_factor(p.job) * moe_local_tokens(p, cfg),
                                             d(m.hidden_size) * activation_element_bytes(p.job.dtype))
                          : alltoall_s(hw, cfg.ep, cfg.etp, bytes);
  const double probs_a2a = flex ? 0.0 : alltoall_s(hw, cfg.ep, cfg.etp, probs_bytes);
  const GroupPlacement etp = place_group(hw, cfg.etp, 1);
  const double gather = all_gather_s(hw, etp, bytes * cfg.etp), scatter = reduce_scatter_s(hw, etp, bytes * cfg.etp);
  const double pass = r * (2.0 * a2a + probs_a2a + gather + scatter);  // dispatch + combine
  comm.forward_s += pass;
  comm.backward_s += pass;
  comm.collective_s += r * a2a;
  comm.expert_s += pass;
  comm.recompute_s += recomputed_layer_share(p.job.ac_policy, cfg.recompute) * pass;
  if (active_recompute_modules(p, cfg) & kRecomputeMoe) comm.recompute_s += pass;  // the whole layer reruns
}

double layer_activation_bytes_for(const Problem& p, const ParallelConfig& cfg) {
  const ModelSpec& m = p.model;
  const double b = d(cfg.micro_batch_size), s = cp_local_seq(p, cfg);  // seq / cp
  const double e = activation_element_bytes(p.job.dtype);
  const double base = policy_layer_activation_bytes(p, cfg);  // costmodel/ac_policy.h
  const double kept = 1.0 - recomputed_layer_share(p.job.ac_policy, cfg.recompute);  // layers not checkpointed whole
  if (!m.moe.enabled() || kept <= 0.0) return base;
  const MoeSpec& x = m.moe;
  const double T = moe_local_tokens(p, cfg);
  const double h = d(m.hidden_size);
  const double routed = moe_load_factor(p.job) * d(x.experts_per_token) * T;
  // The GEMMs keep their inputs as they cast them, q bytes per element (costmodel/fp8.h; e without a TE
  // FP8 recipe): TE's GroupedLinear saves each expert's quantized input (grouped_linear.py forward:
  // inputmats, column-wise usage, in save_for_backward), so the dispatched rows (fc1's input) and the
  // activation's output (fc2's) are q; fc1's outputs stay e. The shared experts' fc2 input likewise, and
  // under FP8 their fc1 keeps a quantized copy of the layer's MLP input, whose 16-bit original the router
  // keeps (the dense layers' fused LayerNormMLP keeps only the quantized one: fp8_stash_delta_bytes).
  const double q = fp8_stashed_input_bytes(p);
  const double fe = d(x.expert_intermediate_size);
  const double fs = d(x.num_shared_experts) * d(x.shared_expert_intermediate_size);
  const double gate_up = stash_factor(m) - 1.0;  // fc1 outputs per intermediate column
  const double routed_bytes = routed * (h * cfg.etp * q + fe * (q + gate_up * e));
  const double shared_bytes = T * fs * (q + gate_up * e) + (fs > 0.0 && q < e ? T * h * q : 0.0);
  const double moe_mlp = routed_bytes + 8.0 * T * d(x.num_experts) + shared_bytes;
  const double dense_mlp = e * s * b * d(m.intermediate_size) * stash_factor(m) / cfg.tp;
  // Megatron-Core's recompute modules discard parts of it (core/recompute_modules.h): moe_act the
  // activation's output (fc2 then saves the original, discarded too: experts.py set_save_original_input),
  // shared_experts their stash, moe all of it (the layer input stays).
  const uint32_t modules = active_recompute_modules(p, cfg);
  double discarded = 0.0;
  if (modules & kRecomputeMoe) discarded = moe_mlp;
  else {
    if (modules & kRecomputeMoeAct) discarded += routed * q * fe;
    if (modules & kRecomputeSharedExperts) discarded += shared_bytes;
  }
  return base + kept * moe_layer_fraction(m) * (moe_mlp - discarded - dense_mlp);
}

namespace {
struct ExpertSync {
  double reduce_s = 0;  // per step (ZeRO-2: all micro-batches)
  double after_s = 0;   // all-gather of updated weights after the optimizer (ZeRO >= 1)
};

ExpertSync expert_sync(const Problem& p, const ParallelConfig& cfg, double params) {
  ExpertSync out;
  const int edp = expert_data_parallel(cfg);
  // ZeRO-3 over the experts gathers and reduces them layer by layer (costmodel/expert_fsdp.h).
  if (edp <= 1 || params <= 0.0 || experts_fully_sharded(p, cfg)) return out;
  const HardwareProfile& hw = p.hardware;
  const GroupPlacement g = expert_data_group(hw, cfg);
  const ParamBytes pb = param_bytes(p.job);
  const double grads = params * pb.gradients;
  if (cfg.zero_stage == 0) out.reduce_s = all_reduce_s(hw, g, grads);
  else if (cfg.zero_stage == 1) out.reduce_s = reduce_scatter_s(hw, g, grads);
  else out.reduce_s = d(cfg.num_micro_batches) * reduce_scatter_s(hw, g, grads);
  if (cfg.zero_stage >= 1) out.after_s = all_gather_s(hw, g, params * pb.weights);
  return out;
}
}  // namespace

void add_expert_grad_sync(const Problem& p, const ParallelConfig& cfg, int stage, double backward_s,
                          double& total_s, double& exposed_s) {
  if (!p.model.moe.enabled()) return;
  const ExpertSync x = expert_sync(p, cfg, stage_expert_parameters_per_gpu(p.model, cfg, stage));
  const double dense_hidden = total_s - exposed_s;
  const double room = std::max(0.0, backward_s - dense_hidden);
  total_s += x.reduce_s + x.after_s;
  exposed_s += (cfg.dp_overlap ? std::max(0.0, x.reduce_s - room) : x.reduce_s) + x.after_s;
}

double expert_chunk_reduce_s(const Problem& p, const ParallelConfig& cfg, int chunk) {
  if (!p.model.moe.enabled()) return 0.0;
  if (experts_fully_sharded(p, cfg))  // per micro-batch, layer by layer (costmodel/expert_fsdp.h)
    return chunk_layers(p.model, cfg, chunk) * expert_layer_collectives(p, cfg).reduce_s;
  const ExpertSync x = expert_sync(p, cfg, chunk_expert_parameters_per_gpu(p.model, cfg, chunk));
  return cfg.zero_stage == 2 ? x.reduce_s / d(cfg.num_micro_batches) : x.reduce_s;
}

double expert_chunk_grad_bytes(const Problem& p, const ParallelConfig& cfg, int chunk) {
  if (!p.model.moe.enabled()) return 0.0;
  return chunk_expert_parameters_per_gpu(p.model, cfg, chunk) * param_bytes(p.job).gradients;
}

}  // namespace meshplan
