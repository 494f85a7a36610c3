// Megatron-Core's selective recompute modules (--recompute-granularity selective --recompute-modules ...).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace meshplan {

struct Problem;
struct ParallelConfig;

/// The submodules Megatron-Core recomputes under --recompute-granularity selective
/// (megatron/core/transformer/transformer_config.py `recompute_modules`, NVIDIA/Megatron-LM d98e8a64),
/// one bit each; 0 = not given, i.e. Megatron's default ["core_attn"] (meshplan's --recompute selective,
/// Korthikanti et al. 2022). As that docstring and transformer_layer.py define them:
///   CoreAttn       the core attention (normal checkpointing)
///   MoeAct         the expert MLP's activation function (output discarded, recomputed; grouped GEMM only)
///   Layernorm      input_layernorm and pre_mlp_layernorm where they are modules of their own, not fused
///                  into the next linear (TE spec: the MoE layers' pre-MLP norm; MLA's input norm)
///   MlaUpProj      MLA's Q and KV up-projections and RoPE (output discarded: Q, K, V)
///   Mlp            the dense MLP submodule (dense layers only; normal checkpointing)
///   Moe            the whole MoE layer, dispatch and combine included (normal checkpointing)
///   SharedExperts  the MoE layer's shared experts (normal checkpointing)
enum RecomputeModule : uint32_t {
  kRecomputeCoreAttn = 1u << 0,
  kRecomputeMoeAct = 1u << 1,
  kRecomputeLayernorm = 1u << 2,
  kRecomputeMlaUpProj = 1u << 3,
  kRecomputeMlp = 1u << 4,
  kRecomputeMoe = 1u << 5,
  kRecomputeSharedExperts = 1u << 6,
};

/// The names of the set bits in Megatron's docstring order (what its list fields take).
std::vector<std::string> recompute_module_names(uint32_t modules);
/// Those names joined by `separator`: "core_attn,moe_act" by default; "" for 0.
std::string recompute_modules_text(uint32_t modules, const std::string& separator = ",");
/// Inverse: names separated by commas (or spaces, as Megatron's CLI takes them). nullopt on an
/// unknown or repeated name or an empty list; `bad` then holds the offending name.
std::optional<uint32_t> parse_recompute_modules(const std::string& s, std::string* bad = nullptr);

/// Model rules Megatron-Core enforces (transformer_config.py __post_init__) and what meshplan costs:
/// moe_act, moe and shared_experts need a MoE model (shared_experts: one with shared experts),
/// mla_up_proj an MLA model. Errors naming --recompute-modules appended to `e`. Configurations without
/// --recompute selective ignore the modules, as Megatron does. (Only megatron and nemo run them: the
/// CLI and the validation loader check the framework.)
void check_recompute_modules(const Problem& p, const std::string& where, ErrorList& e);

}  // namespace meshplan
