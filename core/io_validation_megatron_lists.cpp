// Validation-run keys recompute_modules and cuda_graphs: Megatron-Core's name-list knobs of a run.
#include <yaml-cpp/yaml.h>

#include "core/cuda_graphs.h"
#include "core/io_detail.h"
#include "core/recompute_modules.h"
#include "core/validation_runs.h"

namespace meshplan::io_detail {

namespace {
// The names of list `key` joined by commas; nullopt (after r.fail) when it is not a list of scalars.
// Elements are read in place (see read_run_layout on yaml-cpp's node memory).
std::optional<std::string> name_list(Reader& r, const YAML::Node& n, const std::string& where, const char* key,
                                     const std::string& example) {
  const YAML::Node list = n[key];
  if (!list.IsSequence() || list.size() == 0) {
    r.fail(where, node_text(list), "must be a non-empty list of names", "e.g. " + example);
    return std::nullopt;
  }
  std::string names;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsScalar()) {
      r.fail(where + "[" + std::to_string(i) + "]", node_text(list[i]), "must be a name", "e.g. " + example);
      return std::nullopt;
    }
    names += (i ? "," : "") + list[i].Scalar();
  }
  return names;
}

bool megatron_core_run(const ValidationRun& run) { return run.framework == "megatron" || run.framework == "nemo"; }
}  // namespace

// recompute_modules: [mla_up_proj, mlp] as the run's preset names them (core/recompute_modules.h);
// they apply under `recompute: selective` (Megatron's --recompute-granularity selective), Megatron-LM and
// NeMo only.
void read_run_recompute(Reader& r, const YAML::Node& n, const std::string& path, ValidationRun& run) {
  if (!Reader::has(n, "recompute_modules")) return;
  const std::string where = path + ".recompute_modules";
  const auto names = name_list(r, n, where, "recompute_modules", "[mla_up_proj, mlp]");
  if (!names) return;
  std::string bad;
  const auto modules = parse_recompute_modules(*names, &bad);
  if (!modules) {
    r.fail(where, bad, "unknown or repeated recompute module",
           "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe or shared_experts, each once");
    return;
  }
  if (!megatron_core_run(run))
    r.fail(where, run.framework, "are Megatron-Core's selective recompute modules",
           "framework: megatron or nemo, or drop the key");
  else if (run.recompute != Recompute::Selective)
    r.fail(where, to_string(run.recompute), "apply under recompute: selective (Megatron ignores them otherwise)",
           "recompute: selective, or drop the key");
  else
    run.recompute_modules = *modules;
}

// cuda_graphs: [attn, moe_router, moe_preprocess] as the run's preset captures (core/cuda_graphs.h);
// Megatron-LM and NeMo only; the scope rules are checked with the run's configuration (validate_features).
void read_run_graphs(Reader& r, const YAML::Node& n, const std::string& path, ValidationRun& run) {
  if (!Reader::has(n, "cuda_graphs")) return;
  const std::string where = path + ".cuda_graphs";
  const auto names = name_list(r, n, where, "cuda_graphs", "[attn, moe_router, moe_preprocess]");
  if (!names) return;
  std::string bad;
  const auto scopes = parse_cuda_graph_scopes(*names, &bad);
  if (!scopes)
    r.fail(where, bad, "unknown or repeated CUDA graph scope",
           "attn, mlp, moe, moe_router, moe_preprocess or full_iteration, each once");
  else if (!megatron_core_run(run))
    r.fail(where, run.framework, "are Megatron-Core's CUDA graph scopes", "framework: megatron or nemo, or drop the key");
  else
    run.cuda_graphs = *scopes;
}

}  // namespace meshplan::io_detail
