// The routed-expert load a job is costed with: measured imbalance and capacity factor (Job::moe_imbalance, moe_capacity_factor).
#pragma once
#include <string>

#include "core/error.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Every reason the job's expert load cannot apply to `m` (empty = valid):
///  - moe_imbalance (the busiest expert's tokens over the mean, 1 = balanced) or a capacity factor on a
///    dense model;
///  - moe_imbalance below 1 or above E / k: each token picks k distinct experts of E, so the busiest sees
///    at most every token, E / k times the mean;
///  - a capacity factor (0 = dropless; Megatron-Core --moe-expert-capacity-factor) negative or above E / k
///    (a capacity of every token: nothing more to drop).
ErrorList validate_moe_load(const ModelSpec& m, const Job& job, const std::string& where);

/// True when the job costs balanced routing: no measured imbalance and no capacity limit.
bool moe_load_balanced(const Job& job);

}  // namespace meshplan
