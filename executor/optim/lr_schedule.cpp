// Warmup + cosine learning-rate schedule.
#include "executor/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace meshplan::exec {

float learning_rate(const LrSchedule& s, int64_t step) {
  if (step < s.warmup_steps) {
    return s.max_lr * static_cast<float>(step + 1) / static_cast<float>(s.warmup_steps);
  }
  const int64_t decay_steps = s.total_steps - s.warmup_steps;
  if (decay_steps <= 0) return s.max_lr;
  const double progress =
      std::min(1.0, static_cast<double>(step - s.warmup_steps) / static_cast<double>(decay_steps));
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
  return static_cast<float>(s.min_lr + (s.max_lr - s.min_lr) * cosine);
}

}  // namespace meshplan::exec
