// Adam's state precision: dtype names, bytes and Megatron-Core's accepted values (core/optimizer_states.h).
#include "core/optimizer_states.h"

namespace meshplan {

const char* to_string(StateDtype d) {
  switch (d) {
    case StateDtype::Fp32: return "fp32";
    case StateDtype::Bf16: return "bf16";
    case StateDtype::Fp16: return "fp16";
    case StateDtype::Fp8: return "fp8";
  }
  return "?";
}

std::optional<StateDtype> parse_state_dtype(const std::string& s) {
  for (auto d : {StateDtype::Fp32, StateDtype::Bf16, StateDtype::Fp16, StateDtype::Fp8})
    if (s == to_string(d)) return d;
  return std::nullopt;
}

double state_dtype_bytes(StateDtype d) {
  switch (d) {
    case StateDtype::Fp32: return 4.0;
    case StateDtype::Bf16:
    case StateDtype::Fp16: return 2.0;
    case StateDtype::Fp8: return 1.0;
  }
  return 4.0;
}

double optimizer_state_bytes(const OptimizerStates& s, bool param_remainders) {
  const bool remainder = s.precision_aware && param_remainders && s.main_params == StateDtype::Fp32;
  const double main = remainder ? 2.0 : state_dtype_bytes(s.main_params);
  return main + state_dtype_bytes(s.exp_avg) + state_dtype_bytes(s.exp_avg_sq);
}

std::string precision_aware_zero_rule(const OptimizerStates& s, int zero) {
  if (!s.precision_aware || zero >= 1) return "";
  return "needs Megatron-Core's distributed optimizer (ZeRO 1) or Megatron-FSDP (ZeRO 2/3)";
}

bool default_states(const OptimizerStates& s) { return s == OptimizerStates{}; }

std::string state_dtype_rule(const std::string& state, StateDtype d) {
  // arguments.py: --main-params-dtype choices ['fp32', 'fp16'].
  if (state == "main_params" && d != StateDtype::Fp32 && d != StateDtype::Fp16) return "fp32 or fp16";
  return "";
}

}  // namespace meshplan
