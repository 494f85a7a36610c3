// AdamW over a flat fp32 range (the chunk's whole buffer, or this rank's ZeRO shard of it): m and v
// live beside the fp32 master weights; weight decay only where the segment says so (not on norms).
#pragma once
#include <cstdint>
#include <vector>

#include "executor/backend.h"
#include "executor/model/param_layout.h"
#include "executor/tensor.h"

namespace meshplan::exec {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;  // decoupled (Loshchilov & Hutter), applied as p -= lr * wd * p
};

class AdamW {
 public:
  /// Optimizer of n elements; `segments` cover [0, n) relative to the range it updates (shift
  /// flat_segments(layout, begin, end) by -begin). m and v start at zero.
  AdamW(Backend& backend, int64_t n, std::vector<FlatSegment> segments, AdamWConfig config = {});

  /// One step at learning rate lr: params (n) updated in place from grads (n).
  void step(float* params, const float* grads, float lr);

  int64_t size() const { return n_; }
  int64_t step_count() const { return t_; }
  void set_step_count(int64_t t) { t_ = t; }  // resuming from a checkpoint
  float* m() { return m_.f32(); }  // (n) first moment, for checkpoints
  float* v() { return v_.f32(); }  // (n) second moment

 private:
  Backend& backend_;
  int64_t n_;
  std::vector<FlatSegment> segments_;
  AdamWConfig config_;
  int64_t t_ = 0;
  Tensor m_;  // (n)
  Tensor v_;  // (n)
};

/// Plain twin of Backend::adamw on host arrays in double precision (tests).
void adamw_reference(float* param, const float* grad, float* m, float* v, int64_t n,
                     const AdamWStep& s);

}  // namespace meshplan::exec
