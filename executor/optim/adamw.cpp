// AdamW over a flat range, segment by segment (weight decay on or off), and its double twin.
#include "executor/optim/adamw.h"

#include <cassert>
#include <cmath>

namespace meshplan::exec {

AdamW::AdamW(Backend& backend, int64_t n, std::vector<FlatSegment> segments, AdamWConfig config)
    : backend_(backend), n_(n), segments_(std::move(segments)), config_(config),
      m_(backend, DType::F32, {n}), v_(backend, DType::F32, {n}) {
  int64_t covered = 0;
  for (const FlatSegment& s : segments_) {
    assert(s.begin == covered && s.end > s.begin && "segments must tile [0, n) in order");
    covered = s.end;
  }
  assert(covered == n);
  (void)covered;  // read only by the asserts (release builds define NDEBUG)
  backend_.fill(m_.f32(), 0.0f, n);
  backend_.fill(v_.f32(), 0.0f, n);
}

void AdamW::step(float* params, const float* grads, float lr) {
  ++t_;
  AdamWStep s;
  s.lr = lr;
  s.beta1 = config_.beta1;
  s.beta2 = config_.beta2;
  s.eps = config_.eps;
  s.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta1), t_));
  s.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta2), t_));
  for (const FlatSegment& seg : segments_) {
    s.weight_decay = seg.weight_decay ? config_.weight_decay : 0.0f;
    backend_.adamw(params + seg.begin, grads + seg.begin, m_.f32() + seg.begin,
                   v_.f32() + seg.begin, seg.end - seg.begin, s);
  }
}

void adamw_reference(float* param, const float* grad, float* m, float* v, int64_t n,
                     const AdamWStep& s) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = grad[i];
    const double mi = s.beta1 * static_cast<double>(m[i]) + (1.0 - s.beta1) * g;
    const double vi = s.beta2 * static_cast<double>(v[i]) + (1.0 - s.beta2) * g * g;
    const double p = param[i];
    const double update = (mi / s.bias_correction1) / (std::sqrt(vi / s.bias_correction2) + s.eps);
    param[i] = static_cast<float>(p - s.lr * (update + s.weight_decay * p));
    m[i] = static_cast<float>(mi);
    v[i] = static_cast<float>(vi);
  }
}

}  // namespace meshplan::exec
