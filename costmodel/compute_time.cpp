// GEMM and element-wise kernel times, per-layer compute and TP communication (costmodel/README.md "Time").
#include "costmodel/fp8_attention.h"
#include "costmodel/compute_time.h"

#include <algorithm>
#include <cmath>

#include "core/loss_chunk.h"
#include "core/megatron_overlap.h"
#include "costmodel/ac_policy.h"
#include "costmodel/activations.h"
#include "costmodel/attention.h"
#include "costmodel/collectives.h"
#include "costmodel/cross_entropy.h"
#include "costmodel/context_parallel.h"
#include "costmodel/eager_elementwise.h"
#include "costmodel/eager_llama_ops.h"
#include "costmodel/fms_llama_ops.h"
#include "costmodel/executor_ops.h"
#include "costmodel/executor_stash.h"
#include "costmodel/fp8.h"
#include "costmodel/fp8_rowwise.h"
#include "costmodel/megatron_eager_ops.h"
#include "costmodel/flops.h"
#include "costmodel/torchtitan_attention_ops.h"
#include "costmodel/tp_overlap.h"
#include "costmodel/moe_cost.h"

namespace meshplan {

double gemm_efficiency(const HardwareProfile& hw, double flops) {
  return burst_gemm_efficiency(hw, flops) * hw.sustained_clock_fraction;
}

double burst_gemm_efficiency(const HardwareProfile& hw, double flops) {
  const auto& pts = hw.gemm_efficiency;
  if (pts.empty()) return 1.0;
  if (flops <= pts.front().flops) return pts.front().efficiency;
  if (flops >= pts.back().flops) return pts.back().efficiency;
  const double x = std::log(flops);
  for (size_t i = 1; i < pts.size(); ++i) {
    if (flops <= pts[i].flops) {
      const double x0 = std::log(pts[i - 1].flops), x1 = std::log(pts[i].flops);
      const double w = x1 > x0 ? (x - x0) / (x1 - x0) : 1.0;
      return pts[i - 1].efficiency + w * (pts[i].efficiency - pts[i - 1].efficiency);
    }
  }
  return pts.back().efficiency;
}

double gemm_time_s(const HardwareProfile& hw, double peak, double flops) {
  if (flops <= 0.0) return 0.0;
  // FP8 (peak above bf16's): the BF16 curve at the size of equal duration (compute_time.h).
  const double bf16 = hw.peak_flops_for("bf16");
  const double at = bf16 > 0.0 && peak > bf16 ? flops * bf16 / peak : flops;
  return flops / (peak * gemm_efficiency(hw, at));
}

double memory_bound_time_s(const HardwareProfile& hw, double bytes) {
  if (bytes <= 0.0) return 0.0;
  return bytes / (hw.hbm_bytes_per_s * hw.hbm_efficiency);
}

double job_peak_flops(const Problem& p) {
  const double peak = p.hardware.peak_flops_for(p.job.dtype);
  return peak > 0.0 ? peak : p.hardware.peak_flops_for("bf16");
}

namespace {
// Element-wise bytes (reads + writes) of one layer's forward on one GPU, 16-bit activations.
struct ElementwiseBytes {
  double outside_core = 0;  // 2 norms (read+write 2 bytes each: 8Th) + 2 bias-dropout-residual
                            // adds (read x, residual, write out, 1-byte mask: 14Th) + activation fn
};

ElementwiseBytes elementwise_bytes(const ModelSpec& m, double b, double s, int tp, bool sp) {
  const double t = static_cast<double>(tp);
  const double T = b * s;
  const double h = static_cast<double>(m.hidden_size);
  const double f = static_cast<double>(m.intermediate_size);
  ElementwiseBytes e;
  const double activation_fn = (m.mlp == MlpKind::Gated ? 6.0 : 4.0) * T * f / t;
  // Each norm beyond two (Gemma 2 / 3's post-norms) reads and writes T h more, 2 bytes each.
  const double extra_norms = static_cast<double>(m.extra_norms_per_layer());
  e.outside_core = (22.0 + 4.0 * extra_norms) * T * h / (sp ? t : 1.0) + activation_fn;
  return e;
}
}  // namespace

LayerCompute layer_compute(const Problem& p, const ParallelConfig& cfg) {
  const HardwareProfile& hw = p.hardware;
  const double peak = job_peak_flops(p);
  const double b = static_cast<double>(cfg.micro_batch_size);
  const double s = cp_local_seq(p, cfg);  // tokens of a sequence on this GPU (seq / cp)
  const double t = static_cast<double>(cfg.tp);
  const LayerFlops f = layer_forward_flops(p.model, b, s);
  const double linear_peak = linear_gemm_peak(p, peak);  // fp8 peak under an FP8 recipe
  const bool rowwise = p.job.fp8 == Fp8Recipe::Rowwise;      // torchao: measured speedups over bf16
  const LinearGemmTimes rw = rowwise ? rowwise_linear_times(p, cfg, peak, b * s) : LinearGemmTimes{};
  const double qkv = rowwise ? rw.qkv : gemm_time_s(hw, linear_peak, f.qkv / t);
  const double out = rowwise ? rw.out : gemm_time_s(hw, linear_peak, f.out_proj / t);
  const double up = rowwise ? rw.up : gemm_time_s(hw, linear_peak, f.mlp_up / t);
  const double down = rowwise ? rw.down : gemm_time_s(hw, linear_peak, f.mlp_down / t);
  // dgrad and wgrad GEMMs: the same FLOPs at the backward's rate (split accumulation under FP8, fp8.h).
  const double backward_peak = linear_gemm_backward_peak(p, peak);
  const double qkv_b = rowwise ? rw.qkv : gemm_time_s(hw, backward_peak, f.qkv / t);
  const double out_b = rowwise ? rw.out : gemm_time_s(hw, backward_peak, f.out_proj / t);
  const double up_b = rowwise ? rw.up : gemm_time_s(hw, backward_peak, f.mlp_up / t);
  const double down_b = rowwise ? rw.down : gemm_time_s(hw, backward_peak, f.mlp_down / t);
  const double ab = activation_element_bytes(p.job.dtype);
  const AttentionCoreTime core = cfg.cp > 1 ? cp_attention(p, cfg, peak, ab).core
                                            : attention_core_time(hw, peak, p.model, p.job.knobs.attention, b, s,
                                                                  cfg.tp, ab, p.job.knobs.fused_kernel, true,
                                                                  fp8_attention_dtype(p.job));
  const ElementwiseBytes e = elementwise_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel);
  const Fp8Overhead casts = fp8_cast_bytes(p, cfg, b * s);
  const double ew_outside = memory_bound_time_s(hw, e.outside_core);
  // Forward and backward element-wise time outside the attention core: the fused framework's count
  // (backward about twice the forward), or meshplan's executor's own kernels (executor_ops.h).
  double ew_forward = ew_outside, ew_backward = 2.0 * ew_outside;
  using ExecutorOps = FrameworkKnobs::ExecutorOps;
  if (p.job.knobs.executor_ops != ExecutorOps::None) {
    const bool attention_stash = p.job.knobs.executor_bf16_attention_stash && cfg.cp <= 1;
    const EagerBytes x = executor_op_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel,
                                           p.job.knobs.executor_ops == ExecutorOps::Fp32Bf16Attention,
                                           attention_stash);
    double forward_bytes = x.forward, backward_bytes = x.backward;
    if (p.job.knobs.executor_gemm_copies) {
      const EagerBytes g = executor_gemm_copy_bytes(p.model, b, s, cfg.tp, p.job.knobs.executor_bf16_gemm_stash,
                                                    cfg.sequence_parallel, attention_stash);
      forward_bytes += g.forward;
      backward_bytes += g.backward;
    }
    // The kernels writing the bf16 stash directly replace the narrowing passes counted above, which
    // exist only with bf16-copy GEMMs and cuDNN's copies (the CPU emulation counts neither).
    const bool fused_gemm = p.job.knobs.executor_gemm_copies && p.job.knobs.executor_bf16_gemm_stash;
    const bool fused_attention = attention_stash && p.job.knobs.executor_ops == ExecutorOps::Fp32Bf16Attention;
    if (fused_gemm || fused_attention) {
      const EagerBytes fused = executor_fused_bf16_saving_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel,
                                                                fused_gemm, fused_attention);
      forward_bytes -= fused.forward;
      backward_bytes -= fused.backward;
    }
    ew_forward = memory_bound_time_s(hw, forward_bytes);
    ew_backward = memory_bound_time_s(hw, backward_bytes);
  }
  // Model code's eager element-wise kernels, summed: unpadding q/k/v around FlashAttention
  // (FrameworkKnobs::unpad_attention) and torchtitan's Llama ops without torch.compile
  // (FrameworkKnobs::torch_compile, costmodel/eager_llama_ops.h).
  EagerBytes eager = p.job.knobs.unpad_attention ? unpad_attention_bytes(p.model, b, s, cfg.tp, ab) : EagerBytes{};
  if (!p.job.knobs.torch_compile) {
    const EagerBytes llama = eager_llama_op_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel, ab,
                                                  p.job.knobs.fused_rmsnorm);
    eager.forward += llama.forward;
    eager.backward += llama.backward;
  }
  if (p.job.knobs.fms_model_code) {  // fms's eager Llama code (costmodel/fms_llama_ops.h)
    const EagerBytes ops = eager_llama_op_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel, ab, false);
    const EagerBytes rope = fms_attention_input_bytes(p.model, b, s, cfg.tp, ab);
    eager.forward += ops.forward + rope.forward;
    eager.backward += ops.backward + rope.backward;
  }
  if (p.job.knobs.torchtitan_attention_inputs) {  // costmodel/torchtitan_attention_ops.h
    const EagerBytes rope = torchtitan_attention_input_bytes(p.model, b, s, cfg.tp, ab);
    eager.forward += rope.forward;
    eager.backward += rope.backward;
  }

  LayerCompute c;
  c.forward_s = qkv + out + up + down + core.forward_s + ew_forward + memory_bound_time_s(hw, eager.forward) +
                memory_bound_time_s(hw, casts.forward_bytes);
  c.dx_gemm_s = qkv_b + out_b + up_b + down_b;
  // Element-wise backward reads the saved tensors and gradients and writes gradients: about twice
  // the forward bytes. The attention core's backward is costmodel/attention.h's.
  c.backward_input_s = c.dx_gemm_s + core.backward_s + ew_backward + memory_bound_time_s(hw, eager.backward) +
                       memory_bound_time_s(hw, casts.backward_bytes);
  c.backward_weight_s = c.dx_gemm_s;  // dW GEMMs mirror the dX GEMMs' shapes and rate
  c.qkv_dw_s = qkv_b;
  c.mlp_up_dw_s = up_b;
  // none 0, selective the attention core, full the forward, torchtitan's policies (costmodel/ac_policy.h).
  c.recompute_s = policy_recompute_s(
      p, cfg, {c.forward_s, core.forward_s,
               ew_forward + memory_bound_time_s(hw, eager.forward) + memory_bound_time_s(hw, casts.forward_bytes),
               linear_peak});
  add_expert_compute(p, cfg, c);  // MoE: routed experts on the busiest rank (costmodel/moe_cost.h)
  add_megatron_eager_ops(p, cfg, c);  // GPT-OSS's clamp, expert biases, YaRN RoPE (costmodel/megatron_eager_ops.h)
  return c;
}

static LayerComm tp_only_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c);

LayerComm layer_tp_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c) {
  LayerComm out = tp_only_comm(p, cfg, c);
  if (cfg.cp <= 1) return out;
  // Context parallelism: the K/V exchange not hidden behind attention (costmodel/context_parallel.h),
  // counted with the layer's exposed intra-layer communication; recompute repeats the forward's.
  const CpAttention a = cp_attention(p, cfg, job_peak_flops(p), activation_element_bytes(p.job.dtype));
  out.forward_s += a.forward_exposed_s;
  out.backward_s += a.backward_exposed_s;
  out.recompute_s += policy_cp_repeat_share(p, cfg) * a.forward_exposed_s;
  return out;
}

static LayerComm tp_only_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c) {
  LayerComm out;
  if (cfg.tp <= 1) return out;
  const HardwareProfile& hw = p.hardware;
  const GroupPlacement g = place_group(hw, cfg.tp, 1);
  const double bytes = 2.0 * static_cast<double>(cfg.micro_batch_size) * cp_local_seq(p, cfg) *
                       static_cast<double>(p.model.hidden_size);
  if (!cfg.sequence_parallel) {
    const double ar = all_reduce_s(hw, g, bytes);
    out.collective_s = ar;
    out.forward_s = 2.0 * ar;  // after the attention out-projection and after the MLP down-projection
    // The dX all-reduces of the QKV and MLP-up layers hide behind their dW GEMMs when issued async;
    // a synchronous all-reduce (2021-22 forks) waits in the open after the layer's backward.
    out.backward_s = p.job.knobs.tp_async_allreduce
                         ? std::max(0.0, ar - c.qkv_dw_s) + std::max(0.0, ar - c.mlp_up_dw_s)
                         : 2.0 * ar;
    out.hidden_s = 2.0 * ar - out.backward_s;
    out.recompute_s = policy_tp_recompute_s(p, cfg, out.forward_s, ar);  // costmodel/ac_policy.h
  } else {
    const double ag = all_gather_s(hw, g, bytes);
    const double rs = reduce_scatter_s(hw, g, bytes);
    if (tp_comm_overlap_on(p.job, cfg)) {  // core/megatron_overlap.h
      LayerComm o = overlapped_tp_comm(layer_gemm_times(p, cfg), ag, rs);
      o.recompute_s = policy_tp_recompute_s(p, cfg, o.forward_s, ag);
      return o;
    }
    out.collective_s = ag + rs;
    out.forward_s = 2.0 * (ag + rs);
    // Exposed: the 2 all-gathers of the row-parallel outputs' gradients and the 2 re-gathers of
    // the column-parallel inputs (SP stores them sharded; dW needs them whole). Megatron issues the
    // re-gather beside the dX GEMM, but the dX GEMM needs the gradient the first all-gather
    // delivers, so we count it exposed. Hidden: the 2 reduce-scatters of the column-parallel
    // inputs' gradients behind their dW GEMMs.
    out.backward_s = 4.0 * ag + std::max(0.0, rs - c.qkv_dw_s) + std::max(0.0, rs - c.mlp_up_dw_s);
    out.hidden_s = 4.0 * ag + 2.0 * rs - out.backward_s;
    out.recompute_s = policy_tp_recompute_s(p, cfg, out.forward_s, ag);
  }
  return out;
}

EndsCompute ends_compute(const Problem& p, const ParallelConfig& cfg) {
  const HardwareProfile& hw = p.hardware;
  const double peak = job_peak_flops(p);
  const double b = static_cast<double>(cfg.micro_batch_size);
  const double s = cp_local_seq(p, cfg);
  const double t = static_cast<double>(cfg.tp);
  const double h = static_cast<double>(p.model.hidden_size);
  const double V = static_cast<double>(p.model.vocab_size);
  const double T = b * s;
  EndsCompute e;
  // Embedding: gather T rows of h (2 bytes) + dropout (read, write, mask); backward scatters-adds.
  e.embedding_forward_s = memory_bound_time_s(hw, 2.0 * T * h + 5.0 * T * h);
  e.embedding_backward_s = memory_bound_time_s(hw, 2.0 * (2.0 * T * h + 5.0 * T * h));
  const double logits = logits_forward_flops(p.model, b, s) / t;
  // Cross entropy over the T*V/t logits of this GPU, with the framework's kernel
  // (costmodel/cross_entropy.h), plus the final norm (8Th, /t with SP).
  const CrossEntropyBytes ce = cross_entropy_bytes_per_logit(p.job.knobs.cross_entropy);
  const double logit_elements = T * V / t;
  const double norm_bytes = 8.0 * T * h / (cfg.sequence_parallel ? t : 1.0);
  // meshplan's chunked loss (core/loss_chunk.h): each LM-head GEMM runs as `chunks` GEMMs of
  // Vc columns, and the backward recomputes every chunk's logits first.
  const int64_t chunks = loss_chunks(std::max<int64_t>(1, static_cast<int64_t>(T)),
                                     std::max<int64_t>(1, p.model.vocab_size / cfg.tp), p.job.knobs.loss_chunk_bytes)
                             .chunks;
  const double head_gemm = chunks * gemm_time_s(hw, peak, logits / chunks);
  const double recompute = chunks > 1 ? head_gemm : 0.0;
  // meshplan's executor with bf16-copy GEMMs copies the head's operands too (executor_ops.h).
  const EagerBytes copies = p.job.knobs.executor_gemm_copies
                                ? executor_head_copy_bytes(p.model, b, s, cfg.tp, chunks)
                                : EagerBytes{};
  // The trainer's own metrics evaluate the loss again over the same logits (costmodel/cross_entropy.h);
  // they run after the micro-batch's backward, costed here with the head's other passes.
  const double metric_bytes = train_metric_bytes_per_logit(p.job.knobs.train_metric_cross_entropies) * logit_elements;
  e.head_forward_s =
      head_gemm + memory_bound_time_s(hw, ce.forward * logit_elements + metric_bytes + norm_bytes + copies.forward);
  e.head_backward_input_s = recompute + head_gemm +
                            memory_bound_time_s(hw, ce.backward * logit_elements + 2.0 * norm_bytes + copies.backward);
  e.head_backward_weight_s = head_gemm;
  if (cfg.tp > 1) {
    const GroupPlacement g = place_group(hw, cfg.tp, 1);
    const double bytes = 2.0 * T * h;
    // Forward: SP all-gathers the final hidden state; without SP the head's input is replicated.
    // Backward: the gradient of the head input is all-reduced (SP: reduce-scattered).
    e.head_tp_comm_forward_s = cfg.sequence_parallel ? all_gather_s(hw, g, bytes) : 0.0;
    e.head_tp_comm_backward_s =
        cfg.sequence_parallel ? reduce_scatter_s(hw, g, bytes) : all_reduce_s(hw, g, bytes);
  }
  return e;
}

}  // namespace meshplan
