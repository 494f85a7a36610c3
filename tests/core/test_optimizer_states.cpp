// Megatron-Core's precision-aware optimizer states (core/optimizer_states.h): bytes, names, rules.
#include <catch2/catch.hpp>

#include "core/job_features.h"
#include "core/optimizer_states.h"
#include "core/parallel_config.h"

using namespace meshplan;

TEST_CASE("optimizer state bytes: fp32 master and moments 12 and the 16-bit remainder 2 with bf16 and fp8 moments") {
  OptimizerStates s;
  CHECK(default_states(s));
  CHECK(optimizer_state_bytes(s, true) == 12.0);  // no precision-aware optimizer: no remainder
  s.precision_aware = true;
  CHECK_FALSE(default_states(s));
  CHECK(optimizer_state_bytes(s, true) == 10.0);   // 2 (remainder) + 4 + 4
  CHECK(optimizer_state_bytes(s, false) == 12.0);  // fp16 weights or FP8 primary weights: the whole fp32
  s.exp_avg = StateDtype::Bf16;
  s.exp_avg_sq = StateDtype::Bf16;
  CHECK(optimizer_state_bytes(s, true) == 6.0);
  CHECK(optimizer_state_bytes(s, false) == 8.0);
  s.main_params = StateDtype::Fp16;  // fp16 master: 2 bytes, no remainder
  s.exp_avg = StateDtype::Fp8;
  s.exp_avg_sq = StateDtype::Fp8;
  CHECK(optimizer_state_bytes(s, true) == 4.0);
}

TEST_CASE("optimizer state dtypes: names round-trip and Megatron-Core's accepted values are enforced") {
  for (auto d : {StateDtype::Fp32, StateDtype::Bf16, StateDtype::Fp16, StateDtype::Fp8})
    CHECK(parse_state_dtype(to_string(d)) == d);
  CHECK_FALSE(parse_state_dtype("float32").has_value());
  CHECK(state_dtype_rule("main_params", StateDtype::Fp16).empty());
  CHECK(state_dtype_rule("main_params", StateDtype::Bf16) == "fp32 or fp16");  // arguments.py choices
  CHECK(state_dtype_rule("exp_avg", StateDtype::Fp8).empty());
  OptimizerStates s;
  CHECK(precision_aware_zero_rule(s, 0).empty());
  s.precision_aware = true;
  CHECK_FALSE(precision_aware_zero_rule(s, 0).empty());
  CHECK(precision_aware_zero_rule(s, 1).empty());
  CHECK(precision_aware_zero_rule(s, 3).empty());
}

TEST_CASE("a job's bytes per parameter take its optimizer states: bf16 weights keep the remainder and FP8 primary weights do not") {
  Job job;
  job.convention = ParamConvention::Megatron;
  CHECK(param_bytes(job).optimizer == 12.0);
  CHECK(param_bytes(job).gradients == 4.0);  // the convention's part is unchanged
  job.knobs.optimizer_states.precision_aware = true;
  job.knobs.optimizer_states.exp_avg = StateDtype::Bf16;
  job.knobs.optimizer_states.exp_avg_sq = StateDtype::Bf16;
  CHECK(param_bytes(job).optimizer == 6.0);
  job.dtype = "fp16";
  CHECK(param_bytes(job).optimizer == 8.0);
  job.dtype = "bf16";
  job.fp8 = Fp8Recipe::Current;
  job.knobs.fp8_param_gather = true;
  REQUIRE(fp8_param_gather_on(job));
  CHECK(param_bytes(job).optimizer == 8.0);  // Megatron-Core keeps the fp32 master with FP8 primary weights
}
