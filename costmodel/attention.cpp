// Attention core costs by kernel kind (formulas in costmodel/README.md "Attention kernel").
#include "costmodel/attention.h"

#include <algorithm>
#include <cmath>

#include "costmodel/attention_speed.h"
#include "costmodel/compute_time.h"
#include "costmodel/fp8_attention.h"

namespace meshplan {

double attention_core_stash_bytes(const ModelSpec& m, AttentionKind k, double b, double s, double e) {
  const double a = static_cast<double>(m.num_heads);
  if (k == AttentionKind::Fused) return 4.0 * a * s * b;  // fp32 log-sum-exp per row and head
  return (m.dropout ? 2.0 * e + 1.0 : e) * a * s * s * b;
}

double causal_block_fraction(double seq) {
  const double n = std::max(1.0, std::ceil(seq / 128.0));
  return (n + 1.0) / (2.0 * n);
}

double window_pair_fraction(double seq, double window) {
  if (window <= 0.0 || seq <= window) return seq * (seq + 1.0) / 2.0 / (seq * seq);
  return (window * (window + 1.0) / 2.0 + (seq - window) * window) / (seq * seq);
}

double window_block_fraction(double seq, double window) {
  const double n = std::max(1.0, std::ceil(seq / 128.0));
  if (window <= 0.0 || window >= seq) return causal_block_fraction(seq);
  const double band = std::ceil(window / 128.0) + 1.0;  // blocks per row block once past the start
  // Row blocks 0 .. band-1 compute i + 1 blocks; the remaining n - band compute `band` each.
  const double head = std::min(n, band);
  const double blocks = head * (head + 1.0) / 2.0 + std::max(0.0, n - band) * band;
  return blocks / (n * n);
}

double chunk_pair_fraction(double seq, double chunk) {
  if (chunk <= 0.0 || seq <= chunk) return window_pair_fraction(seq, 0.0);
  const double q = std::floor(seq / chunk), r = seq - q * chunk;
  return (q * chunk * (chunk + 1.0) / 2.0 + r * (r + 1.0) / 2.0) / (seq * seq);
}

double chunk_block_fraction(double seq, double chunk) {
  if (chunk <= 0.0 || seq <= chunk) return causal_block_fraction(seq);
  const double n = std::ceil(seq / 128.0);
  const double q = std::floor(seq / chunk), c = std::ceil(chunk / 128.0);
  const double tail = std::ceil((seq - q * chunk) / 128.0);
  return (q * c * (c + 1.0) / 2.0 + tail * (tail + 1.0) / 2.0) / (n * n);
}

double attention_backward_extra_flops(const LayerFlops& f, AttentionKind k) {
  return k == AttentionKind::Fused ? f.scores : 0.0;
}

namespace {
AttentionCoreTime materialized_time(const HardwareProfile& hw, double peak, const ModelSpec& m, double b,
                                    double s, int tp) {
  const double t = static_cast<double>(tp);
  const LayerFlops f = layer_forward_flops(m, b, s);
  const double a = static_cast<double>(m.num_heads);
  // Each batched GEMM writes or reads the b a s^2 / t scores once, 2 bytes each (Q K^T writes them, P V
  // reads the probabilities; in backward dP = dO V^T writes, dV = P^T dO, dQ and dK read): with a head
  // width of 128-192 that traffic, not the 2 d FLOPs per score, bounds it on GPUs whose FLOP/byte ridge
  // is above d (A100 ~160 at its sustained rates, H100 ~300, B200 ~310).
  const double score_io = memory_bound_time_s(hw, 2.0 * b * a * s * s / t);
  const double gemms = std::max(gemm_time_s(hw, peak, f.scores / t), score_io) +
                       std::max(gemm_time_s(hw, peak, f.values / t), score_io);
  // Softmax read + write 4 b a s^2 / t; attention dropout read, write, 1-byte mask 5 b a s^2 / t, where the
  // model trains with dropout (the stash above makes the same distinction).
  const double ew = memory_bound_time_s(hw, (m.dropout ? 9.0 : 4.0) * b * a * s * s / t);
  AttentionCoreTime out;
  out.forward_s = gemms + ew;
  out.forward_elementwise_s = ew;
  out.backward_s = 2.0 * gemms + 2.0 * ew;
  return out;
}

// One layer's fused kernel with a window of `w` tokens or blocks of `c` tokens (0, 0: full causal).
AttentionCoreTime fused_time(const HardwareProfile& hw, double peak, const ModelSpec& m, double b, double s,
                             int tp, double e, FusedAttentionKernel kernel, const std::string& fp8_dtype, double w,
                             double c = 0.0) {
  const double t = static_cast<double>(tp);
  const LayerFlops f = layer_forward_flops(m, b, s);
  const bool chunked = c > 0.0 && c < s;
  const bool windowed = w > 0.0 && w < s;
  const double blocks = chunked ? chunk_block_fraction(s, c) : window_block_fraction(s, w);
  const double executed = blocks * f.attention_core() / t;  // 2 GEMMs, computed blocks
  const double q = static_cast<double>(m.q_dim()), kv = static_cast<double>(m.kv_dim());
  const double a = static_cast<double>(m.num_heads);
  const double lse = 4.0 * b * a * s / t;
  // HBM traffic: forward reads Q, K, V and writes O and the LSE; backward reads Q, K, V, O, dO and
  // the LSE and writes dQ, dK, dV (and the row sums dO.O, fp32, as large as the LSE).
  const double fwd_bytes = e * b * s * (2.0 * q + 2.0 * kv) / t + lse;
  const double bwd_bytes = e * b * s * (5.0 * q + 4.0 * kv) / t + 3.0 * lse;
  const double bwd_flops = 2.5 * executed;  // 5 GEMMs per 2 of the forward
  double fwd_gemm = 0.0, bwd_gemm = 0.0;
  if (const AttentionKernelSpeed* curve = attention_speed_curve(hw, kernel, static_cast<double>(m.head_dim()))) {
    // The kernel's published forward + backward speed at this length (costmodel/attention_speed.h),
    // on FLOPs counted as its benchmark counts them: causal half of the square, backward 2.5x.
    // A window: its share of the square, at the speed of a causal kernel of length 2w. Chunks: their
    // share, at the speed of a causal kernel of the chunk's length.
    const double half = chunked ? chunk_pair_fraction(s, c) : windowed ? window_pair_fraction(s, w) : 0.5;
    const double length = chunked ? c : windowed ? std::min(s, 2.0 * w) : s;
    const double total = 3.5 * half * f.attention_core() / t / curve_flops_per_s(*curve, length);
    const double share = forward_time_share(hw, kernel);
    fwd_gemm = share * total;
    bwd_gemm = (1.0 - share) * total;
  } else {
    // The profile's measured/published kernel efficiency when it has one, else relative to its GEMMs.
    const FusedEfficiency measured = fused_kernel_efficiency(hw, kernel);
    const double fwd_eff =
        measured.forward > 0.0 ? measured.forward : gemm_efficiency(hw, executed) * kFusedForwardRelEfficiency;
    const double bwd_eff = measured.backward > 0.0 ? measured.backward
                                                   : gemm_efficiency(hw, bwd_flops) * kFusedBackwardRelEfficiency;
    fwd_gemm = executed / (peak * fwd_eff);
    bwd_gemm = bwd_flops / (peak * bwd_eff);
  }
  // FP8 attention (costmodel/fp8_attention.h): the measured 16-bit / FP8 time ratio of this shape. A
  // window layer takes its own window's measurement; chunks run as causal kernels of their length.
  const Fp8AttentionRatio r =
      fp8_attention_ratio(hw, fp8_dtype, m.head_dim(), windowed ? static_cast<int64_t>(w) : 0, chunked ? c : s);
  fwd_gemm /= r.forward;
  bwd_gemm /= r.backward;
  AttentionCoreTime out;
  out.forward_s = std::max(fwd_gemm, memory_bound_time_s(hw, fwd_bytes));
  out.backward_s = std::max(bwd_gemm, memory_bound_time_s(hw, bwd_bytes));
  return out;
}
}  // namespace

FusedEfficiency fused_kernel_efficiency(const HardwareProfile& hw, FusedAttentionKernel kernel) {
  if (kernel == FusedAttentionKernel::Cudnn && hw.cudnn_attention_forward_efficiency > 0.0)
    return {hw.cudnn_attention_forward_efficiency, hw.cudnn_attention_backward_efficiency};
  return {hw.fused_attention_forward_efficiency, hw.fused_attention_backward_efficiency};
}

AttentionCoreTime attention_core_time(const HardwareProfile& hw, double peak, const ModelSpec& m, AttentionKind k,
                                      double b, double s, int tp, double e, FusedAttentionKernel kernel,
                                      bool apply_window, const std::string& fp8_dtype) {
  if (k != AttentionKind::Fused) return materialized_time(hw, peak, m, b, s, tp);
  const AttentionCoreTime full = fused_time(hw, peak, m, b, s, tp, e, kernel, fp8_dtype, 0.0);
  const double w = static_cast<double>(m.sliding_window), c = static_cast<double>(m.attention_chunk);
  const bool windowed = w > 0.0 && w < s && m.sliding_window_layers > 0;
  const bool chunked = c > 0.0 && c < s && m.chunked_layers > 0;
  if (!apply_window || !(windowed || chunked) || m.num_layers <= 0) return full;
  // The layers' mean: sliding_window_layers windowed (or chunked_layers chunked), the rest full.
  const AttentionCoreTime win = windowed ? fused_time(hw, peak, m, b, s, tp, e, kernel, fp8_dtype, w)
                                         : fused_time(hw, peak, m, b, s, tp, e, kernel, fp8_dtype, 0.0, c);
  const double share = static_cast<double>(windowed ? m.sliding_window_layers : m.chunked_layers) /
                       static_cast<double>(m.num_layers);
  AttentionCoreTime out;
  out.forward_s = share * win.forward_s + (1.0 - share) * full.forward_s;
  out.backward_s = share * win.backward_s + (1.0 - share) * full.backward_s;
  out.forward_elementwise_s = share * win.forward_elementwise_s + (1.0 - share) * full.forward_elementwise_s;
  return out;
}

}  // namespace meshplan
