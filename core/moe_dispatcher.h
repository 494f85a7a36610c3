// Megatron-Core's MoE token dispatchers: the alltoall dispatcher and the flex dispatcher's DeepEP and HybridEP backends.
#pragma once
#include <optional>
#include <string>

namespace meshplan {

/// How one MoE layer's tokens reach their experts (Megatron-Core --moe-token-dispatcher-type, and
/// --moe-flex-dispatcher-backend under `flex`; megatron/core/transformer/moe/README.md):
///  - AllToAll: MoEAlltoAllTokenDispatcher sends every (token, expert) pair, k rows per token
///    (costmodel/moe_cost.h alltoall_s);
///  - DeepEp, HybridEp: the flex dispatcher ("removes redundant tokens during cross-node communication",
///    the README's feature table): a token crosses the network once per destination NVLink domain and
///    reaches each destination GPU once (costmodel/moe_dedup_dispatch.h). HybridEP is NVIDIA's backend
///    (TMA and IBGDA; the only one for multi-node NVLink, GB200 NVL72); both are costed alike.
enum class MoeDispatcher { AllToAll, DeepEp, HybridEp };

const char* to_string(MoeDispatcher d);  // "alltoall", "deepep", "hybridep"
std::optional<MoeDispatcher> parse_moe_dispatcher(const std::string& s);

}  // namespace meshplan
