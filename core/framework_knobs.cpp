// Names of the framework knobs' enums (core/framework_knobs.h).
#include "core/framework_knobs.h"

namespace meshplan {

const char* to_string(AttentionKind k) { return k == AttentionKind::Fused ? "fused" : "materialized"; }

std::optional<AttentionKind> parse_attention(const std::string& s) {
  if (s == "fused") return AttentionKind::Fused;
  if (s == "materialized") return AttentionKind::Materialized;
  return std::nullopt;
}

}  // namespace meshplan
