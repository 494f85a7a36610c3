// CPU kernels: embedding, RMSNorm, rotary, SwiGLU, vocab-parallel cross-entropy pieces, AdamW.
#include <cassert>
#include <cmath>

#include "executor/cpu/cpu_backend.h"

namespace meshplan::exec {

void CpuBackend::embedding_forward(float* out, const int32_t* tokens, const float* table,
                                   int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const int64_t row = static_cast<int64_t>(tokens[n]) - vocab_begin;
    float* o = out + n * C;  // (C)
    if (row < 0 || row >= Vl) {
      for (int64_t c = 0; c < C; ++c) o[c] = 0.0f;
    } else {
      const float* t = table + row * C;
      for (int64_t c = 0; c < C; ++c) o[c] = t[c];
    }
  }
}

void CpuBackend::embedding_backward(float* dtable, const float* dout, const int32_t* tokens,
                                    int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const int64_t row = static_cast<int64_t>(tokens[n]) - vocab_begin;
    if (row < 0 || row >= Vl) continue;
    float* g = dtable + row * C;
    const float* d = dout + n * C;
    for (int64_t c = 0; c < C; ++c) g[c] += d[c];
  }
}

void CpuBackend::rmsnorm_forward(float* out, float* rstd, const float* x, const float* w,
                                 int64_t N, int64_t C, float eps) {
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C;
    double ss = 0;
    for (int64_t c = 0; c < C; ++c) ss += static_cast<double>(xn[c]) * xn[c];
    const float r = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(C) + eps));
    rstd[n] = r;
    float* on = out + n * C;
    for (int64_t c = 0; c < C; ++c) on[c] = xn[c] * r * w[c];
  }
}

void CpuBackend::rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x,
                                  const float* w, const float* rstd, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C;
    const float* dn = dout + n * C;
    const float r = rstd[n];
    double dot = 0;  // sum_j dy_j w_j x_j
    for (int64_t c = 0; c < C; ++c) dot += static_cast<double>(dn[c]) * w[c] * xn[c];
    const float k = static_cast<float>(dot * r * r * r / static_cast<double>(C));
    float* dxn = dx + n * C;
    for (int64_t c = 0; c < C; ++c) {
      dxn[c] += r * w[c] * dn[c] - k * xn[c];
      dw[c] += dn[c] * xn[c] * r;
    }
  }
}

namespace {
// Rotates pairs (i, i + D/2) of x (B, T, H, D) by sign * t * theta^(-2i/D).
void rope_rotate(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta, double sign) {
  assert(D % 2 == 0);
  const int64_t half = D / 2;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const double inv_freq = std::pow(static_cast<double>(theta), -2.0 * i / static_cast<double>(D));
      const double angle = sign * static_cast<double>(t) * inv_freq;
      const float c = static_cast<float>(std::cos(angle));
      const float s = static_cast<float>(std::sin(angle));
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t h = 0; h < H; ++h) {
          float* p = x + ((b * T + t) * H + h) * D;
          const float x1 = p[i];
          const float x2 = p[i + half];
          p[i] = x1 * c - x2 * s;
          p[i + half] = x2 * c + x1 * s;
        }
      }
    }
  }
}
}  // namespace

void CpuBackend::rope_forward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta) {
  rope_rotate(x, B, T, H, D, theta, 1.0);
}

void CpuBackend::rope_backward(float* dx, int64_t B, int64_t T, int64_t H, int64_t D,
                               float theta) {
  rope_rotate(dx, B, T, H, D, theta, -1.0);  // a rotation's transpose is its inverse
}

void CpuBackend::swiglu_forward(float* out, const float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float sig = 1.0f / (1.0f + std::exp(-g));
    out[i] = g * sig * up[i];
  }
}

void CpuBackend::swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                                 const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float sig = 1.0f / (1.0f + std::exp(-g));
    const float silu = g * sig;
    const float dsilu = sig * (1.0f + g * (1.0f - sig));
    dgate[i] = dout[i] * up[i] * dsilu;
    dup[i] = dout[i] * silu;
  }
}

void CpuBackend::ce_row_max(float* row_max, const float* logits, int64_t N, int64_t Vl) {
  for (int64_t n = 0; n < N; ++n) {
    const float* l = logits + n * Vl;
    float m = -INFINITY;
    for (int64_t j = 0; j < Vl; ++j) m = l[j] > m ? l[j] : m;
    row_max[n] = m;
  }
}

void CpuBackend::ce_row_sumexp(float* sumexp, const float* logits, const float* row_max,
                               int64_t N, int64_t Vl) {
  for (int64_t n = 0; n < N; ++n) {
    const float* l = logits + n * Vl;
    double s = 0;
    for (int64_t j = 0; j < Vl; ++j) s += std::exp(static_cast<double>(l[j] - row_max[n]));
    sumexp[n] = static_cast<float>(s);
  }
}

void CpuBackend::ce_target_logit(float* target_logit, const float* logits, const int32_t* targets,
                                 int64_t vocab_begin, int64_t N, int64_t Vl) {
  for (int64_t n = 0; n < N; ++n) {
    const int64_t j = static_cast<int64_t>(targets[n]) - vocab_begin;
    target_logit[n] = (j >= 0 && j < Vl) ? logits[n * Vl + j] : 0.0f;
  }
}

void CpuBackend::ce_merge_stats(float* row_max, float* sumexp, const float* chunk_max,
                                const float* chunk_sumexp, int64_t N) {
  for (int64_t n = 0; n < N; ++n) {
    const float m = std::max(row_max[n], chunk_max[n]);
    if (m == -INFINITY) continue;  // nothing seen yet on either side
    sumexp[n] = sumexp[n] * std::exp(row_max[n] - m) + chunk_sumexp[n] * std::exp(chunk_max[n] - m);
    row_max[n] = m;
  }
}

void CpuBackend::ce_loss(float* loss, const float* row_max, const float* sumexp,
                         const float* target_logit, int64_t N) {
  for (int64_t n = 0; n < N; ++n) {
    loss[n] = std::log(sumexp[n]) + row_max[n] - target_logit[n];
  }
}

void CpuBackend::ce_backward(float* dlogits, const float* logits, const float* row_max,
                             const float* sumexp, const int32_t* targets, int64_t vocab_begin,
                             float scale, int64_t N, int64_t Vl) {
  for (int64_t n = 0; n < N; ++n) {
    const float* l = logits + n * Vl;
    float* d = dlogits + n * Vl;
    const float inv = 1.0f / sumexp[n];
    const int64_t t = static_cast<int64_t>(targets[n]) - vocab_begin;
    for (int64_t j = 0; j < Vl; ++j) {
      const float p = std::exp(l[j] - row_max[n]) * inv;
      d[j] = scale * (p - (j == t ? 1.0f : 0.0f));
    }
  }
}

void CpuBackend::adamw(float* param, const float* grad, float* m, float* v, int64_t n,
                       const AdamWStep& s) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * g;
    v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * g * g;
    const float mhat = m[i] / s.bias_correction1;
    const float vhat = v[i] / s.bias_correction2;
    param[i] -= s.lr * (mhat / (std::sqrt(vhat) + s.eps) + s.weight_decay * param[i]);
  }
}

}  // namespace meshplan::exec
