// Multi-token prediction in the framework exports (planner/mtp_export.h).
#include "planner/mtp_export.h"

namespace meshplan {

std::vector<std::pair<std::string, std::string>> megatron_mtp_flags(const Problem& p) {
  if (p.model.mtp_layers <= 0) return {};
  return {{"--mtp-num-layers", std::to_string(p.model.mtp_layers)}};
}

std::string nemo_mtp_keys(const Problem& p) {
  if (p.model.mtp_layers <= 0) return "";
  return "  mtp_num_layers: " + std::to_string(p.model.mtp_layers) + "\n";
}

Result<bool> check_mtp_export(const std::string& kind, const Problem& p) {
  if (p.model.mtp_layers <= 0 || kind == "megatron" || kind == "nemo") return true;
  return make_error("--export " + kind, "mtp_layers", std::to_string(p.model.mtp_layers),
                    "is Megatron-Core's multi-token prediction; " + kind + " has no MTP module to train",
                    "plan with --mtp-layers 0, or export for megatron or nemo");
}

}  // namespace meshplan
