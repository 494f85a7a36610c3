// torchao row-wise FP8 linears from the profile's measured speedup table (costmodel/fp8_rowwise.h).
#include "costmodel/fp8_rowwise.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "costmodel/compute_time.h"
#include "costmodel/flops.h"
#include "costmodel/log_interp.h"

namespace meshplan {


double rowwise_speedup(const Fp8LinearSpeedup& t, double M, double K, double N) {
  assert(!t.empty() && t.speedup.size() == t.m.size() * t.k.size() * t.n.size());
  const LogBracket bm = log_bracket(t.m, M), bk = log_bracket(t.k, K), bn = log_bracket(t.n, N);
  const size_t im = bm.i, ik = bk.i, in = bn.i;
  const double wm = bm.w, wk = bk.w, wn = bn.w;
  auto at = [&](size_t a, size_t b, size_t c) {
    a = std::min(a, t.m.size() - 1);
    b = std::min(b, t.k.size() - 1);
    c = std::min(c, t.n.size() - 1);
    return t.speedup[(a * t.k.size() + b) * t.n.size() + c];
  };
  double v = 0.0;
  for (int dm = 0; dm < 2; ++dm)
    for (int dk = 0; dk < 2; ++dk)
      for (int dn = 0; dn < 2; ++dn)
        v += (dm ? wm : 1 - wm) * (dk ? wk : 1 - wk) * (dn ? wn : 1 - wn) * at(im + dm, ik + dk, in + dn);
  return v;
}

LinearGemmTimes rowwise_linear_times(const Problem& p, const ParallelConfig& cfg, double dense_peak, double tokens) {
  const HardwareProfile& hw = p.hardware;
  const Fp8LinearSpeedup& table = hw.fp8_rowwise_speedup;
  const double t = static_cast<double>(cfg.tp);
  const double h = static_cast<double>(p.model.hidden_size);
  const double q = static_cast<double>(p.model.num_heads) * static_cast<double>(p.model.head_dim());
  const double kv = static_cast<double>(p.model.kv_dim());
  auto linear = [&](double K, double N) {
    return gemm_time_s(hw, dense_peak, 2.0 * tokens * K * N) / rowwise_speedup(table, tokens, K, N);
  };
  LinearGemmTimes out;
  out.qkv = linear(h, q / t) + 2.0 * linear(h, kv / t);
  out.out = linear(q / t, h);
  // The dense MLP's width from its FLOPs (MoE layers' dense part differs from intermediate_size).
  const LayerFlops lf = layer_forward_flops(p.model, 1.0, tokens);
  const double gates = p.model.mlp == MlpKind::Gated ? 2.0 : 1.0;
  const double f = lf.mlp_up / (2.0 * tokens * h * gates);
  if (f > 0.0) {
    out.up = gates * linear(h, f / t);
    out.down = linear(f / t, h);
  }
  return out;
}

}  // namespace meshplan
