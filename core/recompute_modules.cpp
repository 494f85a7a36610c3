// Names and rules of Megatron-Core's selective recompute modules (core/recompute_modules.h).
#include "core/recompute_modules.h"

#include "core/name_bits.h"
#include "core/parallel_config.h"

namespace meshplan {

namespace {
constexpr NamedBit kNames[] = {{kRecomputeCoreAttn, "core_attn"},       {kRecomputeMoeAct, "moe_act"},
                               {kRecomputeLayernorm, "layernorm"},      {kRecomputeMlaUpProj, "mla_up_proj"},
                               {kRecomputeMlp, "mlp"},                  {kRecomputeMoe, "moe"},
                               {kRecomputeSharedExperts, "shared_experts"}};
}  // namespace

std::vector<std::string> recompute_module_names(uint32_t modules) { return bit_names(named_bits(kNames), modules); }

std::string recompute_modules_text(uint32_t modules, const std::string& separator) {
  return bit_names_text(named_bits(kNames), modules, separator);
}

std::optional<uint32_t> parse_recompute_modules(const std::string& s, std::string* bad) {
  return parse_bit_names(named_bits(kNames), s, bad);
}

void check_recompute_modules(const Problem& p, const std::string& w, ErrorList& e) {
  const uint32_t m = p.job.knobs.recompute_modules;
  if (m == 0) return;
  const std::string text = recompute_modules_text(m);
  const bool moe = p.model.moe.enabled();
  if ((m & (kRecomputeMoeAct | kRecomputeMoe | kRecomputeSharedExperts)) && !moe)
    e.push_back(make_error(w, "--recompute-modules", text,
                           "moe_act, moe and shared_experts recompute parts of MoE layers; " + p.model.name + " is dense",
                           "drop them from --recompute-modules"));
  if ((m & kRecomputeSharedExperts) && moe && p.model.moe.num_shared_experts == 0)
    e.push_back(make_error(w, "--recompute-modules", text, p.model.name + " has no shared experts",
                           "drop shared_experts from --recompute-modules"));
  if ((m & kRecomputeMlaUpProj) && !p.model.mla.enabled())
    e.push_back(make_error(w, "--recompute-modules", text,
                           "mla_up_proj needs multi-head latent attention (Megatron-Core raises ValueError); " +
                               p.model.name + " has none",
                           "drop mla_up_proj from --recompute-modules"));
}

}  // namespace meshplan
