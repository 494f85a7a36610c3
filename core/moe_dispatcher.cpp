// Names of Megatron-Core's MoE token dispatchers (core/moe_dispatcher.h).
#include "core/moe_dispatcher.h"

namespace meshplan {

const char* to_string(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::AllToAll: return "alltoall";
    case MoeDispatcher::DeepEp: return "deepep";
    case MoeDispatcher::HybridEp: return "hybridep";
  }
  return "?";
}

std::optional<MoeDispatcher> parse_moe_dispatcher(const std::string& s) {
  if (s == "alltoall") return MoeDispatcher::AllToAll;
  if (s == "deepep") return MoeDispatcher::DeepEp;
  if (s == "hybridep") return MoeDispatcher::HybridEp;
  return std::nullopt;
}

}  // namespace meshplan
