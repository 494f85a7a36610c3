// Adam's state precision: Megatron-Core's precision-aware optimizer (main params, exp_avg, exp_avg_sq dtypes).
#pragma once
#include <optional>
#include <string>

namespace meshplan {

/// Storage dtype of one optimizer state tensor. Fp8 is Transformer Engine's FP8 (E4M3) moment storage
/// with a per-tensor scale (1 byte per element; the scale is negligible).
enum class StateDtype { Fp32, Bf16, Fp16, Fp8 };
const char* to_string(StateDtype d);
std::optional<StateDtype> parse_state_dtype(const std::string& s);
double state_dtype_bytes(StateDtype d);

/// The dtypes the optimizer keeps, per parameter of its shard. Megatron-Core
/// (megatron/training/arguments.py, "Args of precision-aware optimizer"): --use-precision-aware-optimizer
/// with --main-params-dtype fp32|fp16, --exp-avg-dtype and --exp-avg-sq-dtype fp32|fp16|bf16|fp8 (each
/// fp32 by default); the states live in Transformer Engine's FusedAdam, "used for storing the optimizer
/// state in memory during training but does not affect the precision in the kernel computation".
/// Megatron-Core's MoE README lists --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 as "reducing optimizer
/// memory by 50 %" (of the two moments); DeepSeek-V3 (arXiv 2412.19437 sec. 3.3.3) trains with BF16
/// moments. All fp32 = the plain fp32 master weights + Adam m + v: 12 bytes per parameter.
struct OptimizerStates {
  bool precision_aware = false;  // --use-precision-aware-optimizer (implied by any dtype below not fp32)
  StateDtype main_params = StateDtype::Fp32;
  StateDtype exp_avg = StateDtype::Fp32;
  StateDtype exp_avg_sq = StateDtype::Fp32;
  bool operator==(const OptimizerStates& o) const {
    return precision_aware == o.precision_aware && main_params == o.main_params && exp_avg == o.exp_avg &&
           exp_avg_sq == o.exp_avg_sq;
  }
  bool operator!=(const OptimizerStates& o) const { return !(*this == o); }
};

/// Bytes per parameter of the optimizer's states: main params + exp_avg + exp_avg_sq (12 when all fp32).
/// `param_remainders`: the fp32 main params are kept as the 16 low bits the bf16 weights lack. Megatron-Core
/// passes store_param_remainders (OptimizerConfig default True, Transformer Engine >= 2.1) to TE's FusedAdam
/// when the precision-aware optimizer manages the master weights (bf16 weights, no FP8 primary weights);
/// FusedAdam keeps it only "when param type is BF16 and master weight type is FP32" (2 bytes, not 4).
double optimizer_state_bytes(const OptimizerStates& s, bool param_remainders);
/// True for Megatron-Core's defaults: no precision-aware optimizer, every state fp32.
bool default_states(const OptimizerStates& s);
/// Empty when the precision-aware optimizer can run at this ZeRO stage; else why not. Megatron-Core
/// (megatron/core/optimizer/__init__.py): "--use-precision-aware-optimizer only supported with distributed
/// optimizer" (ZeRO 1; Megatron-FSDP, ZeRO 2/3, keeps its main params too).
std::string precision_aware_zero_rule(const OptimizerStates& s, int zero);
/// Empty when Megatron-Core accepts `d` for the named state ("main_params": fp32 or fp16; the moments:
/// any); otherwise the values it accepts, for an error hint.
std::string state_dtype_rule(const std::string& state, StateDtype d);

}  // namespace meshplan
