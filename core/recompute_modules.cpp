// Names and rules of Megatron-Core's selective recompute modules (core/recompute_modules.h).
#include "core/recompute_modules.h"

#include <sstream>

#include "core/parallel_config.h"

namespace meshplan {

namespace {
struct Name {
  uint32_t bit;
  const char* text;
};
constexpr Name kNames[] = {{kRecomputeCoreAttn, "core_attn"},       {kRecomputeMoeAct, "moe_act"},
                           {kRecomputeLayernorm, "layernorm"},      {kRecomputeMlaUpProj, "mla_up_proj"},
                           {kRecomputeMlp, "mlp"},                  {kRecomputeMoe, "moe"},
                           {kRecomputeSharedExperts, "shared_experts"}};
}  // namespace

std::vector<std::string> recompute_module_names(uint32_t modules) {
  std::vector<std::string> out;
  for (const Name& n : kNames)
    if (modules & n.bit) out.emplace_back(n.text);
  return out;
}

std::string recompute_modules_text(uint32_t modules, const std::string& separator) {
  std::string out;
  for (const std::string& name : recompute_module_names(modules)) out += (out.empty() ? "" : separator) + name;
  return out;
}

std::optional<uint32_t> parse_recompute_modules(const std::string& s, std::string* bad) {
  std::string text = s;
  for (char& c : text)
    if (c == ',') c = ' ';
  std::istringstream in(text);
  uint32_t modules = 0;
  std::string word;
  while (in >> word) {
    uint32_t bit = 0;
    for (const Name& n : kNames)
      if (word == n.text) bit = n.bit;
    if (bit == 0 || (modules & bit)) {
      if (bad) *bad = word;
      return std::nullopt;
    }
    modules |= bit;
  }
  if (modules == 0) {
    if (bad) *bad = s;
    return std::nullopt;
  }
  return modules;
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
