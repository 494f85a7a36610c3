// --recompute-modules and --cuda-graphs, and their plan-file keys (cli/megatron_list_options.h).
#include "cli/megatron_list_options.h"

#include <CLI/CLI.hpp>
#include <optional>

#include "core/cuda_graphs.h"
#include "core/framework.h"
#include "core/recompute_modules.h"

namespace meshplan::cli {

namespace {
constexpr const char* kCmd = "command line";

// One list knob: its flag, plan key, what it is, how to parse its names and what they may be, where the
// flag's text and the parsed bits live.
struct ListKnob {
  const char* flag;
  const char* key;
  const char* what;  // "selective recompute modules"
  std::optional<uint32_t> (*parse)(const std::string&, std::string*);
  const char* names;  // the hint: every accepted name
  std::string MegatronListOptions::*option;
  uint32_t FrameworkKnobs::*knob;
};

const ListKnob kKnobs[] = {
    {"--recompute-modules", "recompute_modules", "selective recompute modules", parse_recompute_modules,
     "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe or shared_experts, each once",
     &MegatronListOptions::recompute_modules, &FrameworkKnobs::recompute_modules},
    {"--cuda-graphs", "cuda_graphs", "CUDA graph scopes", parse_cuda_graph_scopes,
     "attn, mlp, moe, moe_router, moe_preprocess or full_iteration, each once", &MegatronListOptions::cuda_graphs,
     &FrameworkKnobs::cuda_graphs},
};

// Parses `text` for knob `k` of `job`, or the Error at (`where`, `field`).
Result<bool> set(const ListKnob& k, const std::string& text, const std::string& where, const std::string& field,
                 Job& job) {
  std::string bad;
  const auto bits = k.parse(text, &bad);
  if (!bits)
    return make_error(where, field, bad.empty() ? text : bad, std::string("unknown or repeated ") + k.what, k.names);
  if (!runs_megatron_core_option(job.framework))
    return make_error(where, field, text,
                      std::string("are Megatron-Core's ") + k.what + "; framework " + to_string(job.framework) +
                          " does not run them",
                      "framework megatron or nemo, or drop " + field);
  job.knobs.*k.knob = *bits;
  return true;
}
}  // namespace

void add_megatron_list_options(CLI::App* sub, MegatronListOptions& o) {
  sub->add_option("--recompute-modules", o.recompute_modules,
                  "Megatron-Core's --recompute-modules under --recompute selective (comma-separated): core_attn "
                  "(the attention core, Korthikanti's selective), moe_act (expert activation), layernorm (norms "
                  "not fused into a linear: MoE layers' pre-MLP norm, MLA's input norm), mla_up_proj (MLA's Q/KV "
                  "up-projections and RoPE), mlp (dense layers' MLP), moe (the whole MoE layer), shared_experts; "
                  "needs --framework megatron or nemo (default: core_attn, i.e. plain --recompute selective)");
  sub->add_option("--cuda-graphs", o.cuda_graphs,
                  "Megatron-Core's CUDA graph scopes (comma-separated; --cuda-graph-impl transformer_engine "
                  "--cuda-graph-scope ...): attn, mlp (dense layers), moe (whole MoE layers; drop-and-pad), "
                  "moe_router, moe_preprocess (with moe_router), or full_iteration alone (--cuda-graph-impl local). "
                  "A captured scope replays with one host call instead of issuing its kernels one by one "
                  "(costmodel/host_launch.h: eager Megatron-Core layers wait on the host when their GPU work is "
                  "short); needs --framework megatron or nemo (default: none, eager)");
}

Result<bool> apply_megatron_list_options(const MegatronListOptions& o, CLI::App* app, Job& job) {
  for (const ListKnob& k : kKnobs) {
    if (!app || app->count(k.flag) == 0) continue;
    if (auto r = set(k, o.*k.option, kCmd, k.flag, job); !r) return r.error();
  }
  return true;
}

void add_megatron_list_json(ojson& j, const Job& job) {
  if (job.knobs.recompute_modules != 0) j["recompute_modules"] = recompute_module_names(job.knobs.recompute_modules);
  if (job.knobs.cuda_graphs != 0) j["cuda_graphs"] = cuda_graph_scope_names(job.knobs.cuda_graphs);
}

Result<bool> read_megatron_list_json(const ojson& j, const std::string& file, const std::string& at, Job& job) {
  for (const ListKnob& k : kKnobs) {
    if (!j.is_object() || !j.contains(k.key)) continue;
    const ojson& v = j[k.key];
    std::string names;
    bool ok = v.is_array() && !v.empty();
    for (size_t i = 0; ok && i < v.size(); ++i) {
      ok = v[i].is_string();
      if (ok) names += (i ? "," : "") + v[i].get<std::string>();
    }
    const std::string field = at + "." + k.key;
    if (!ok) return make_error(file, field, v.dump(), "must be a non-empty list of names", k.names);
    if (auto r = set(k, names, file, field, job); !r) return r.error();
  }
  return true;
}

}  // namespace meshplan::cli
