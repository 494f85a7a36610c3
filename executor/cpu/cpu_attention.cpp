// Causal GQA attention on the CPU: per (sequence, head) Eigen GEMMs over strided head slices (fast
// path) and a scalar one-row-at-a-time reference (plain twin). Scale 1/sqrt(D).
#include <Eigen/Core>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "executor/cpu/reference.h"

namespace meshplan::exec {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using HeadMap = Eigen::Map<RowMat, 0, Stride>;             // (T, D) slice of (B, T, H, D)
using ConstHeadMap = Eigen::Map<const RowMat, 0, Stride>;
using SquareMap = Eigen::Map<RowMat>;                      // (T, T) scores in the workspace

// Offset of element (b, t=0, h, 0) in a (B, T, H, D) tensor.
int64_t head_offset(const AttentionDims& d, int64_t b, int64_t h, int64_t H) {
  return (b * d.T * H + h) * d.D;
}
int64_t kv_head(const AttentionDims& d, int64_t h) { return h / (d.NH / d.NKV); }
float attn_scale(const AttentionDims& d) { return 1.0f / std::sqrt(static_cast<float>(d.D)); }

// Causal softmax probabilities (T, T) of one head from scores, given each row's lse.
void probs_from_lse(SquareMap& s, const float* lse_row) {
  const int64_t T = s.rows();
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < T; ++j) s(t, j) = j <= t ? std::exp(s(t, j) - lse_row[t]) : 0.0f;
  }
}
// Uses the caller's workspace, or owns one when given none.
struct Workspace {
  Workspace(float* given, int64_t floats) : data(given) {
    if (data == nullptr) {
      owned.resize(static_cast<size_t>(floats));
      data = owned.data();
    }
  }
  float* data;
  std::vector<float> owned;
};
}  // namespace

int64_t attention_workspace_floats(const AttentionDims& d) { return 2 * d.T * d.T; }

void attention_forward_eigen(float* out, float* lse, float* probs, const float* q, const float* k,
                             const float* v, const AttentionDims& d, float* workspace) {
  assert(d.NH % d.NKV == 0);
  const int64_t T = d.T;
  Workspace ws(workspace, attention_workspace_floats(d));
  SquareMap s(ws.data, T, T);
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.NH; ++h) {
      const int64_t g = kv_head(d, h);
      ConstHeadMap Q(q + head_offset(d, b, h, d.NH), T, d.D, Stride(d.NH * d.D));
      ConstHeadMap K(k + head_offset(d, b, g, d.NKV), T, d.D, Stride(d.NKV * d.D));
      ConstHeadMap V(v + head_offset(d, b, g, d.NKV), T, d.D, Stride(d.NKV * d.D));
      HeadMap O(out + head_offset(d, b, h, d.NH), T, d.D, Stride(d.NH * d.D));
      s.noalias() = attn_scale(d) * (Q * K.transpose());  // (T, T)
      float* lse_row = lse + (b * d.NH + h) * T;
      for (int64_t t = 0; t < T; ++t) {
        const float m = s.row(t).head(t + 1).maxCoeff();
        double l = 0;
        for (int64_t j = 0; j <= t; ++j) l += std::exp(static_cast<double>(s(t, j) - m));
        lse_row[t] = m + static_cast<float>(std::log(l));
      }
      probs_from_lse(s, lse_row);
      O.noalias() = s * V;
      if (probs != nullptr) {
        Eigen::Map<RowMat>(probs + (b * d.NH + h) * T * T, T, T) = s;
      }
    }
  }
}

void attention_backward_eigen(float* dq, float* dk, float* dv, const float* dout, const float* q,
                              const float* k, const float* v, const float* lse,
                              const float* probs, const AttentionDims& d, float* workspace) {
  const int64_t T = d.T;
  const float scale = attn_scale(d);
  const int64_t kv_numel = d.B * T * d.NKV * d.D;
  for (int64_t i = 0; i < kv_numel; ++i) dk[i] = dv[i] = 0.0f;  // accumulated over GQA groups
  Workspace ws(workspace, attention_workspace_floats(d));
  SquareMap p(ws.data, T, T), dp(ws.data + T * T, T, T);
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.NH; ++h) {
      const int64_t g = kv_head(d, h);
      ConstHeadMap Q(q + head_offset(d, b, h, d.NH), T, d.D, Stride(d.NH * d.D));
      ConstHeadMap K(k + head_offset(d, b, g, d.NKV), T, d.D, Stride(d.NKV * d.D));
      ConstHeadMap V(v + head_offset(d, b, g, d.NKV), T, d.D, Stride(d.NKV * d.D));
      ConstHeadMap dO(dout + head_offset(d, b, h, d.NH), T, d.D, Stride(d.NH * d.D));
      HeadMap dQ(dq + head_offset(d, b, h, d.NH), T, d.D, Stride(d.NH * d.D));
      HeadMap dK(dk + head_offset(d, b, g, d.NKV), T, d.D, Stride(d.NKV * d.D));
      HeadMap dV(dv + head_offset(d, b, g, d.NKV), T, d.D, Stride(d.NKV * d.D));
      if (probs != nullptr) {
        p = Eigen::Map<const RowMat>(probs + (b * d.NH + h) * T * T, T, T);
      } else {
        p.noalias() = scale * (Q * K.transpose());
        probs_from_lse(p, lse + (b * d.NH + h) * T);
      }
      dV.noalias() += p.transpose() * dO;
      dp.noalias() = dO * V.transpose();                             // (T, T)
      const Eigen::VectorXf rowdot = p.cwiseProduct(dp).rowwise().sum();  // (T)
      dp = p.cwiseProduct(dp.colwise() - rowdot);                    // dS
      dQ.noalias() = scale * (dp * K);
      dK.noalias() += scale * (dp.transpose() * Q);
    }
  }
}

void attention_forward_reference(float* out, float* lse, float* probs, const float* q,
                                 const float* k, const float* v, const AttentionDims& d) {
  const int64_t T = d.T, D = d.D;
  const float scale = attn_scale(d);
  std::vector<double> s(T);
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.NH; ++h) {
      const int64_t g = kv_head(d, h);
      for (int64_t t = 0; t < T; ++t) {
        const float* qt = q + ((b * T + t) * d.NH + h) * D;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j <= t; ++j) {
          const float* kj = k + ((b * T + j) * d.NKV + g) * D;
          double dot = 0;
          for (int64_t i = 0; i < D; ++i) dot += static_cast<double>(qt[i]) * kj[i];
          s[j] = dot * scale;
          m = s[j] > m ? s[j] : m;
        }
        double l = 0;
        for (int64_t j = 0; j <= t; ++j) l += std::exp(s[j] - m);
        lse[(b * d.NH + h) * T + t] = static_cast<float>(m + std::log(l));
        float* ot = out + ((b * T + t) * d.NH + h) * D;
        for (int64_t i = 0; i < D; ++i) {
          double acc = 0;
          for (int64_t j = 0; j <= t; ++j) acc += std::exp(s[j] - m) / l * v[((b * T + j) * d.NKV + g) * D + i];
          ot[i] = static_cast<float>(acc);
        }
        if (probs != nullptr) {
          float* pr = probs + ((b * d.NH + h) * T + t) * T;
          for (int64_t j = 0; j < T; ++j) pr[j] = j <= t ? static_cast<float>(std::exp(s[j] - m) / l) : 0.0f;
        }
      }
    }
  }
}

void attention_backward_reference(float* dq, float* dk, float* dv, const float* dout,
                                  const float* q, const float* k, const float* v,
                                  const float* lse, const AttentionDims& d) {
  const int64_t T = d.T, D = d.D;
  const double scale = attn_scale(d);
  for (int64_t i = 0; i < d.B * T * d.NKV * D; ++i) dk[i] = dv[i] = 0.0f;
  std::vector<double> p(T), dp(T);
  for (int64_t b = 0; b < d.B; ++b) {
    for (int64_t h = 0; h < d.NH; ++h) {
      const int64_t g = kv_head(d, h);
      for (int64_t t = 0; t < T; ++t) {
        const float* qt = q + ((b * T + t) * d.NH + h) * D;
        const float* dot_ = dout + ((b * T + t) * d.NH + h) * D;
        double rowdot = 0;
        for (int64_t j = 0; j <= t; ++j) {
          const float* kj = k + ((b * T + j) * d.NKV + g) * D;
          const float* vj = v + ((b * T + j) * d.NKV + g) * D;
          double s = 0, dpj = 0;
          for (int64_t i = 0; i < D; ++i) {
            s += static_cast<double>(qt[i]) * kj[i];
            dpj += static_cast<double>(dot_[i]) * vj[i];
          }
          p[j] = std::exp(s * scale - lse[(b * d.NH + h) * T + t]);
          dp[j] = dpj;
          rowdot += p[j] * dpj;
        }
        float* dqt = dq + ((b * T + t) * d.NH + h) * D;
        for (int64_t i = 0; i < D; ++i) dqt[i] = 0.0f;
        for (int64_t j = 0; j <= t; ++j) {
          const double ds = p[j] * (dp[j] - rowdot);
          const float* kj = k + ((b * T + j) * d.NKV + g) * D;
          float* dkj = dk + ((b * T + j) * d.NKV + g) * D;
          float* dvj = dv + ((b * T + j) * d.NKV + g) * D;
          for (int64_t i = 0; i < D; ++i) {
            dqt[i] += static_cast<float>(scale * ds * kj[i]);
            dkj[i] += static_cast<float>(scale * ds * qt[i]);
            dvj[i] += static_cast<float>(p[j] * dot_[i]);
          }
        }
      }
    }
  }
}

}  // namespace meshplan::exec
