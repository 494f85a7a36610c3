// Rules of the routed-expert load (core/moe_load.h).
#include "core/moe_load.h"

#include <algorithm>
#include <cstdio>

namespace meshplan {

namespace {
std::string format_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
}  // namespace

ErrorList validate_moe_load(const ModelSpec& m, const Job& job, const std::string& where) {
  ErrorList e;
  const bool imbalanced = job.moe_imbalance != 1.0, capped = job.moe_capacity_factor != 0.0;
  if (!m.moe.enabled()) {
    if (imbalanced)
      e.push_back(make_error(where, "moe_imbalance", format_number(job.moe_imbalance),
                             "is the expert load of a mixture-of-experts model; " + m.name + " is dense",
                             "drop it"));
    if (capped)
      e.push_back(make_error(where, "moe_capacity_factor", format_number(job.moe_capacity_factor),
                             "caps the expert load of a mixture-of-experts model; " + m.name + " is dense",
                             "drop it"));
    return e;
  }
  const double most = static_cast<double>(m.moe.num_experts) / static_cast<double>(std::max<int64_t>(1, m.moe.experts_per_token));
  if (!(job.moe_imbalance >= 1.0 && job.moe_imbalance <= most))
    e.push_back(make_error(where, "moe_imbalance", format_number(job.moe_imbalance),
                           "must be in [1, " + format_number(most) + "] (the busiest expert's tokens over the mean; " +
                               "at most E / k = " + std::to_string(m.moe.num_experts) + " / " +
                               std::to_string(m.moe.experts_per_token) + ")",
                           "1 for balanced routing, e.g. 1.3 measured"));
  if (!(job.moe_capacity_factor >= 0.0 && job.moe_capacity_factor <= most))
    e.push_back(make_error(where, "moe_capacity_factor", format_number(job.moe_capacity_factor),
                           "must be in [0, " + format_number(most) + "] (0 = dropless)", "e.g. 1.0 or 1.25"));
  return e;
}

bool moe_load_balanced(const Job& job) { return job.moe_imbalance == 1.0 && job.moe_capacity_factor == 0.0; }

}  // namespace meshplan
