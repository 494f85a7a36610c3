// Learning rate per step: linear warmup to max_lr, then cosine decay to min_lr at total_steps.
#pragma once
#include <cstdint>

namespace meshplan::exec {

struct LrSchedule {
  float max_lr = 3e-4f;
  float min_lr = 3e-5f;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;  // steps after which lr stays min_lr
};

/// lr for 0-based `step`: (step+1)/warmup * max_lr during warmup, then
/// min_lr + 0.5 (max_lr - min_lr)(1 + cos(pi * progress)), progress 0..1 over the remaining steps.
float learning_rate(const LrSchedule& s, int64_t step);

}  // namespace meshplan::exec
