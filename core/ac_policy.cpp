// Names of the activation-checkpoint policies (core/ac_policy.h).
#include "core/ac_policy.h"

#include <cstdlib>

#include "core/parallel_config.h"

namespace meshplan {

std::string to_string(const AcPolicy& p) {
  switch (p.kind) {
    case AcPolicyKind::Megatron: return "megatron";
    case AcPolicyKind::TorchtitanOp: return "torchtitan-op";
    case AcPolicyKind::EveryNLayers: return "every-" + std::to_string(p.every_n_layers) + "-layers";
  }
  return "megatron";
}

std::optional<AcPolicy> parse_ac_policy(const std::string& s) {
  AcPolicy p;
  if (s.empty() || s == "megatron") return p;
  if (s == "torchtitan-op") {
    p.kind = AcPolicyKind::TorchtitanOp;
    return p;
  }
  const std::string head = "every-", tail = "-layers";
  if (s.size() <= head.size() + tail.size() || s.compare(0, head.size(), head) != 0 ||
      s.compare(s.size() - tail.size(), tail.size(), tail) != 0)
    return std::nullopt;
  const std::string digits = s.substr(head.size(), s.size() - head.size() - tail.size());
  if (digits.empty() || digits.size() > 7 || digits[0] == '0') return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  const long n = std::strtol(digits.c_str(), nullptr, 10);
  if (n < 1 || n > 1000000) return std::nullopt;
  p.kind = AcPolicyKind::EveryNLayers;
  p.every_n_layers = static_cast<int>(n);
  return p;
}

void check_ac_policy(const Problem& p, const ParallelConfig& c, const std::string& w, ErrorList& e) {
  if (p.job.ac_policy.kind != AcPolicyKind::TorchtitanOp || c.recompute != Recompute::Selective) return;
  if (p.model.moe.enabled() || p.model.mla.enabled())
    e.push_back(make_error(w, "--ac-policy", to_string(p.job.ac_policy),
                           "is modelled for dense blocks only (this model has experts or latent attention)",
                           "use --ac-policy megatron or --recompute full"));
  if (p.job.knobs.attention != AttentionKind::Fused)
    e.push_back(make_error(w, "--ac-policy", to_string(p.job.ac_policy),
                           "saves the fused SDPA kernel's output: not modelled with --attention materialized",
                           "use --attention fused"));
}

}  // namespace meshplan
