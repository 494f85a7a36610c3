// GEMM sweep through the backend with a sampled double-precision check of every product.
#include "executor/calibrate/gemm_probe.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "executor/tensor.h"

namespace meshplan::exec {

namespace {

// Deterministic values in [-1, 1).
float pseudo_random(uint64_t i) {
  i = (i + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
  i ^= i >> 31;
  return static_cast<float>(static_cast<double>(i >> 11) / 4503599627370496.0 - 1.0);
}

// C (M, N) = A (M, K) @ B^T with B stored (N, K); checks 16 entries in double.
double sampled_error(const GemmShape& s, const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c) {
  double worst = 0;
  for (int k = 0; k < 16; ++k) {
    const int64_t i = static_cast<int64_t>(pseudo_random(1000 + k) * 0.5f * s.M + 0.5f * s.M) % s.M;
    const int64_t j = static_cast<int64_t>(pseudo_random(2000 + k) * 0.5f * s.N + 0.5f * s.N) % s.N;
    double ref = 0, scale = 0;
    for (int64_t t = 0; t < s.K; ++t) {
      ref += static_cast<double>(a[i * s.K + t]) * b[j * s.K + t];
      scale += std::fabs(static_cast<double>(a[i * s.K + t]) * b[j * s.K + t]);
    }
    worst = std::max(worst, std::fabs(c[i * s.N + j] - ref) / std::max(scale, 1e-30));
  }
  return worst;
}

}  // namespace

std::vector<GemmShape> default_gemm_shapes(int64_t max_n) {
  std::vector<GemmShape> shapes;
  for (double n = 16; n <= static_cast<double>(max_n) + 0.5; n *= 1.5) {
    const int64_t k = static_cast<int64_t>(std::lround(n / 8.0)) * 8;
    shapes.push_back({k, k, k});
    shapes.push_back({4 * k, k, k});  // tokens x hidden -> hidden (projection)
    shapes.push_back({4 * k, k, 3 * k});  // tokens x MLP width -> hidden (down projection)
  }
  std::sort(shapes.begin(), shapes.end(), [](const GemmShape& x, const GemmShape& y) { return x.flops() < y.flops(); });
  return shapes;
}

std::vector<GemmMeasurement> run_gemm_probe(Backend& backend, Communicator& group,
                                            const std::vector<GemmShape>& shapes, double target_s,
                                            const ProgressFn& progress) {
  std::vector<GemmMeasurement> out;
  for (size_t idx = 0; idx < shapes.size(); ++idx) {
    const GemmShape& s = shapes[idx];
    if (progress) progress(static_cast<double>(idx) / shapes.size(), "GEMM " + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K));
    std::vector<float> a(static_cast<size_t>(s.M * s.K)), b(static_cast<size_t>(s.N * s.K)), c(static_cast<size_t>(s.M * s.N));
    for (size_t i = 0; i < a.size(); ++i) a[i] = pseudo_random(i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = pseudo_random(i + a.size());
    // The three layouts a linear layer uses, same flops: forward y = x W^T (NT), input gradient
    // dx = dy W (NN), weight gradient dW = dy^T x (TN); the shape's time is their mean.
    Tensor ta(backend, DType::F32, {s.M, s.K}), tb(backend, DType::F32, {s.N, s.K}), tc(backend, DType::F32, {s.M, s.N});
    backend.copy_from_host(ta.data(), a.data(), ta.bytes());
    backend.copy_from_host(tb.data(), b.data(), tb.bytes());
    Tensor tn(backend, DType::F32, {s.M, s.N}), tk(backend, DType::F32, {s.K, s.N});  // NN: (M,K)x(K,N); TN: (K,M)^T x (K,N)
    backend.fill(tn.f32(), 0.0f, tn.numel());
    backend.fill(tk.f32(), 0.0f, tk.numel());
    group.barrier();  // every rank computes at the same time
    auto nt = [&] {
      backend.gemm(false, true, s.M, s.N, s.K, 1.0f, ta.f32(), tb.f32(), 0.0f, tc.f32());
      backend.synchronize();
    };
    auto nn = [&] {
      backend.gemm(false, false, s.M, s.N, s.K, 1.0f, ta.f32(), tk.f32(), 0.0f, tn.f32());
      backend.synchronize();
    };
    auto tn_call = [&] {
      backend.gemm(true, false, s.M, s.N, s.K, 1.0f, ta.f32(), tn.f32(), 0.0f, tc.f32());
      backend.synchronize();
    };
    float t = static_cast<float>((time_local_call(nn, target_s, 200) + time_local_call(tn_call, target_s, 200)) / 3.0);
    t += static_cast<float>(time_local_call(nt, target_s, 200) / 3.0);  // last: tc holds x W^T
    // Median over ranks: gather every rank's time.
    std::vector<float> all(static_cast<size_t>(group.size()));
    group.all_gather(&t, all.data(), 1);
    std::sort(all.begin(), all.end());
    GemmMeasurement m;
    m.shape = s;
    m.time_s = all[all.size() / 2];
    backend.copy_to_host(c.data(), tc.data(), tc.bytes());
    m.max_rel_error = sampled_error(s, a, b, c);
    m.verified = m.max_rel_error <= 1e-4;
    out.push_back(m);
  }
  return out;
}

std::vector<GemmSample> gemm_samples(const std::vector<GemmMeasurement>& m) {
  std::vector<GemmSample> out;
  for (const auto& x : m) out.push_back({x.shape.flops(), x.time_s});
  return out;
}

}  // namespace meshplan::exec
