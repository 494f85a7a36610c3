// Top-k routing with renormalised gates and its backward (see moe_router.h).
#include "executor/model/moe_router.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace meshplan::exec {

Routing route_top_k(const std::vector<float>& logits, int64_t N, int64_t E, int64_t k) {
  assert(k >= 1 && k <= E && static_cast<int64_t>(logits.size()) == N * E);
  Routing r{N, k, std::vector<int32_t>(N * k), std::vector<float>(N * k)};
  std::vector<double> p(E);
  std::vector<int32_t> idx(E);
  for (int64_t n = 0; n < N; ++n) {
    const float* row = logits.data() + n * E;
    const double mx = *std::max_element(row, row + E);
    double z = 0;
    for (int64_t e = 0; e < E; ++e) z += (p[e] = std::exp(static_cast<double>(row[e]) - mx));
    for (int64_t e = 0; e < E; ++e) p[e] /= z;
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
    double chosen = 0;
    for (int64_t j = 0; j < k; ++j) chosen += p[idx[j]];
    for (int64_t j = 0; j < k; ++j) {
      r.expert[n * k + j] = idx[j];
      r.gate[n * k + j] = static_cast<float>(p[idx[j]] / chosen);
    }
  }
  return r;
}

std::vector<float> router_backward(const Routing& r, const std::vector<double>& dgate, int64_t E) {
  std::vector<float> dlogits(static_cast<size_t>(r.tokens * E), 0.0f);
  for (int64_t n = 0; n < r.tokens; ++n) {
    double dot = 0;  // sum_j g_j dg_j
    for (int64_t j = 0; j < r.k; ++j) dot += r.gate[n * r.k + j] * dgate[n * r.k + j];
    for (int64_t j = 0; j < r.k; ++j) {
      const int64_t s = n * r.k + j;
      dlogits[n * E + r.expert[s]] = static_cast<float>(r.gate[s] * (dgate[s] - dot));
    }
  }
  return dlogits;
}

}  // namespace meshplan::exec
