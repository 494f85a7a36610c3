// One block of context-parallel attention on the host: forward into online-softmax statistics,
// backward with the global log-sum-exp (see context_parallel_block.h).
#include "executor/parallel/context_parallel_block.h"

#include <cmath>
#include <limits>

namespace meshplan::exec {

OnlineSoftmax::OnlineSoftmax(const CpBlockDims& d)
    : m(static_cast<size_t>(d.B * d.NH * d.Tl), -std::numeric_limits<double>::infinity()),
      l(m.size(), 0.0),
      acc(m.size() * static_cast<size_t>(d.D), 0.0) {}

void OnlineSoftmax::finish(const CpBlockDims& d, float* out, float* lse) const {
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.NH; ++h) {
      for (int64_t t = 0; t < d.Tl; ++t) {
        const int64_t row = (b * d.NH + h) * d.Tl + t;
        lse[row] = static_cast<float>(m[row] + std::log(l[row]));
        float* o = out + ((b * d.Tl + t) * d.NH + h) * d.D;
        for (int64_t i = 0; i < d.D; ++i) o[i] = static_cast<float>(acc[row * d.D + i] / l[row]);
      }
    }
  }
}

namespace {
double dot(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}
}  // namespace

void cp_block_forward(const CpBlockDims& d, const float* q, const float* k, const float* v,
                      int qc, int kc, bool diagonal, OnlineSoftmax& s) {
  const int64_t c = d.chunk(), group = d.NH / d.NKV;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.D));
  std::vector<double> score(static_cast<size_t>(c));
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.NH; ++h) {
      const int64_t kvh = h / group;
      for (int64_t i = 0; i < c; ++i) {
        const int64_t tq = qc * c + i;
        const float* qi = q + ((b * d.Tl + tq) * d.NH + h) * d.D;
        const int64_t keys = diagonal ? i + 1 : c;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < keys; ++j) {
          score[j] = scale * dot(qi, k + ((b * d.Tl + kc * c + j) * d.NKV + kvh) * d.D, d.D);
          mx = std::max(mx, score[j]);
        }
        const int64_t row = (b * d.NH + h) * d.Tl + tq;
        const double m_new = std::max(s.m[row], mx);
        const double rescale = std::exp(s.m[row] - m_new);  // 0 for the first block (m = -inf)
        double* acc = s.acc.data() + row * d.D;
        s.l[row] *= rescale;
        for (int64_t x = 0; x < d.D; ++x) acc[x] *= rescale;
        for (int64_t j = 0; j < keys; ++j) {
          const double p = std::exp(score[j] - m_new);
          s.l[row] += p;
          const float* vj = v + ((b * d.Tl + kc * c + j) * d.NKV + kvh) * d.D;
          for (int64_t x = 0; x < d.D; ++x) acc[x] += p * vj[x];
        }
        s.m[row] = m_new;
      }
    }
  }
}

void cp_block_backward(const CpBlockDims& d, const float* q, const float* k, const float* v,
                       const float* dout, const float* lse, const std::vector<double>& delta,
                       int qc, int kc, bool diagonal, std::vector<double>& dq, float* dk, float* dv) {
  const int64_t c = d.chunk(), group = d.NH / d.NKV;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.D));
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.NH; ++h) {
      const int64_t kvh = h / group;
      for (int64_t i = 0; i < c; ++i) {
        const int64_t tq = qc * c + i;
        const int64_t qoff = ((b * d.Tl + tq) * d.NH + h) * d.D;
        const int64_t row = (b * d.NH + h) * d.Tl + tq;
        const int64_t keys = diagonal ? i + 1 : c;
        for (int64_t j = 0; j < keys; ++j) {
          const int64_t koff = ((b * d.Tl + kc * c + j) * d.NKV + kvh) * d.D;
          const double p = std::exp(scale * dot(q + qoff, k + koff, d.D) - lse[row]);
          const double dp = dot(dout + qoff, v + koff, d.D);
          const double ds = p * (dp - delta[row]) * scale;
          for (int64_t x = 0; x < d.D; ++x) {
            dv[koff + x] += static_cast<float>(p * dout[qoff + x]);
            dk[koff + x] += static_cast<float>(ds * q[qoff + x]);
            dq[qoff + x] += ds * k[koff + x];
          }
        }
      }
    }
  }
}

}  // namespace meshplan::exec
