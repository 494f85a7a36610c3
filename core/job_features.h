// Names, parsing and layout rules of the issue-11 job features: context parallelism (CP) and its
// K/V exchange, FP8 recipes and data-parallel gradient compression.
#pragma once
#include <optional>
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

const char* to_string(CpComm c);
const char* to_string(Fp8Recipe r);
const char* to_string(GradCompression g);
/// "p2p" | "all_gather" | "a2a" (Megatron-Core --cp-comm-type spellings; "all-gather" too).
std::optional<CpComm> parse_cp_comm(const std::string& s);
/// "none" | "delayed" | "current" | "blockwise" | "mxfp8" (Transformer Engine recipe names).
std::optional<Fp8Recipe> parse_fp8_recipe(const std::string& s);

/// A parsed --grad-compression value: "none", "powersgd:R", "onebit-adam", "onebit-lamb",
/// "topk:F" (0 < F < 1). Writes kind, powersgd_rank and topk_fraction into `job`; an Error
/// naming `field` otherwise.
Result<bool> parse_grad_compression(const std::string& s, const std::string& where, const std::string& field,
                                    Job& job);
/// The --grad-compression spelling of the job's setting ("powersgd:4", "topk:0.01", ...).
std::string grad_compression_text(const Job& job);

/// Batch data-parallel degree: gpus / (tp * cp * pp) (Megatron-Core: world = tp * cp * dp * pp,
/// megatron/core/parallel_state.py initialize_model_parallel).
int64_t batch_dp(const Job& job, int tp, int cp, int pp);

/// Rules of the issue-11 features on one configuration, appended to `e`:
/// - CP: cp >= 1; with cp > 1 the sequence splits into 2*cp chunks for causal load balancing
///   (Megatron-Core get_batch_on_this_cp_rank: seq_len % (2 * cp) == 0); a2a scatters heads, so
///   (heads / tp) and (kv heads / tp) must be multiples of cp (Transformer Engine
///   AttnFuncWithCPAndQKVOA2A asserts it); CP needs a fused attention kernel (Transformer Engine runs
///   CP only in its flash/cuDNN fused attention backends).
/// - FP8: the hardware profile must list an "fp8" peak.
/// - Gradient compression: which ZeRO stages each works with (compression_zero_rule).
/// - FP8 primary weights, --tp-comm-overlap and --overlap-param-gather: the layouts Megatron-Core runs
///   them on (fp8_param_gather_zero_rule, core/megatron_overlap.h).
void validate_features(const Problem& p, const ParallelConfig& cfg, const std::string& where, ErrorList& e);

/// Empty when `g` works with ZeRO stage `zero`, else why not. PowerSGD and top-k are PyTorch DDP
/// communication hooks that replace DDP's gradient all-reduce (torch.distributed.algorithms.
/// ddp_comm_hooks): ZeRO 0 only (ZeRO-1/2/3 and FSDP reduce-scatter instead). DeepSpeed's 1-bit
/// Adam and 1-bit LAMB run their own compressed all-reduce of the momentum and do not support ZeRO
/// (DeepSpeed 1-bit Adam tutorial: "1-bit Adam ... not compatible with ZeRO"; the engine asserts
/// that ZeRO is disabled for OnebitAdam / OnebitLamb): ZeRO 0 only.
std::string compression_zero_rule(GradCompression g, int zero);

/// FrameworkKnobs::fp8_param_gather under one of Transformer Engine's recipes (delayed, current,
/// blockwise, mxfp8; torchao's row-wise keeps 16-bit weights): FP8 primary weights are in effect.
bool fp8_param_gather_on(const Job& job);

/// Empty when FP8 primary weights can run at ZeRO stage `zero`, else why not. Megatron-Core asserts
/// "--fp8-param-gather only supported with distributed optimizer, torch fsdp2, megatron fsdp"
/// (megatron/training/arguments.py validate_args): ZeRO 1 or more.
std::string fp8_param_gather_zero_rule(const Job& job, int zero);

}  // namespace meshplan
