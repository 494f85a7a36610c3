// What the framework exports add for mixture-of-experts and MLA models, and what DeepSpeed refuses.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Megatron-LM flags for MoE (megatron/core/transformer/moe/README.md "MoE Related Arguments"):
/// --num-experts, --moe-router-topk, --moe-ffn-hidden-size, --expert-model-parallel-size,
/// --expert-tensor-parallel-size (written even when equal to tp, whose value it defaults to),
/// --moe-grouped-gemm, --moe-token-dispatcher-type alltoall (the README recommends it with EP; or flex
/// with --moe-flex-dispatcher-backend deepep|hybridep under FrameworkKnobs::moe_dispatcher),
/// --moe-shared-expert-intermediate-size, --moe-layer-freq as a Python list expression,
/// --moe-router-enable-expert-bias, --moe-expert-capacity-factor, --overlap-moe-expert-parallel-comm and
/// --delay-wgrad-compute under FrameworkKnobs::moe_a2a_overlap; for MLA --multi-latent-attention,
/// --q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim, --v-head-dim. Empty for
/// dense models. Pairs of (flag, value); an empty value is a switch.
std::vector<std::pair<std::string, std::string>> megatron_moe_flags(const Problem& p, const ParallelConfig& c);

/// NeMo model.* keys (Megatron-Core TransformerConfig fields): num_moe_experts, moe_router_topk,
/// moe_ffn_hidden_size, expert_model_parallel_size, expert_tensor_parallel_size, moe_grouped_gemm,
/// moe_token_dispatcher_type, moe_shared_expert_intermediate_size. Lines indented by two spaces;
/// empty for dense models.
std::string nemo_moe_keys(const Problem& p, const ParallelConfig& c);

/// torchtitan [parallelism] keys expert_parallel_degree and expert_tensor_parallel_degree; empty
/// for dense models.
std::string torchtitan_moe_keys(const Problem& p, const ParallelConfig& c);

/// DeepSpeed-MoE builds its expert-parallel groups inside the data-parallel group
/// (deepspeed/utils/groups.py, _create_expert_data_and_model_parallel: dp world size divisible by
/// ep_size), so ep must divide dp; its experts are either whole or split by the model's own TP
/// (enable_expert_tensor_parallelism), so etp must be 1 or tp; it has no overlapped expert all-to-all
/// (--moe-a2a-overlap) and no flex dispatcher (--moe-dispatcher). Anything else is the one-line Error.
Result<bool> check_deepspeed_moe(const Problem& p, const ParallelConfig& c);

/// One line for DeepSpeed MoE exports: ds_config.json has no expert keys, ep_size goes to the model's
/// deepspeed.moe.layer.MoE(...). Empty for dense models.
std::string deepspeed_moe_note(const Problem& p, const ParallelConfig& c);

}  // namespace meshplan
