// CPU GEMMs: Eigen (fast path) and a triple loop accumulating in double (its plain twin).
#include <Eigen/Core>
#include <cassert>

#include "executor/cpu/reference.h"

namespace meshplan::exec {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat>;
using Map = Eigen::Map<RowMat>;

template <class L, class R>
void finish(Map& c, const L& a, const R& b, float alpha, float beta) {
  if (beta == 0.0f) {
    c.noalias() = alpha * (a * b);
  } else {
    if (beta != 1.0f) c *= beta;
    c.noalias() += alpha * (a * b);
  }
}
}  // namespace

void gemm_eigen(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, const float* B, float beta, float* C) {
  assert(M >= 0 && N >= 0 && K >= 0);
  Map c(C, M, N);
  if (M == 0 || N == 0) return;
  ConstMap a(A, trans_a ? K : M, trans_a ? M : K);  // stored shape
  ConstMap b(B, trans_b ? N : K, trans_b ? K : N);
  if (!trans_a && !trans_b) finish(c, a, b, alpha, beta);
  if (!trans_a && trans_b) finish(c, a, b.transpose(), alpha, beta);
  if (trans_a && !trans_b) finish(c, a.transpose(), b, alpha, beta);
  if (trans_a && trans_b) finish(c, a.transpose(), b.transpose(), alpha, beta);
}

void gemm_naive(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, const float* B, float beta, float* C) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < K; ++p) {
        const float a = trans_a ? A[p * M + i] : A[i * K + p];  // op(A)[i, p]
        const float b = trans_b ? B[j * K + p] : B[p * N + j];  // op(B)[p, j]
        acc += static_cast<double>(a) * b;
      }
      const double prior = beta == 0.0f ? 0.0 : static_cast<double>(beta) * C[i * N + j];
      C[i * N + j] = static_cast<float>(alpha * acc + prior);
    }
  }
}

}  // namespace meshplan::exec
