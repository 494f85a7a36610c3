// Validation-run key recompute_modules: Megatron-Core's selective recompute modules of the run.
#include <yaml-cpp/yaml.h>

#include "core/io_detail.h"
#include "core/recompute_modules.h"
#include "core/validation_runs.h"

namespace meshplan::io_detail {

// recompute_modules: [mla_up_proj, mlp] as the run's preset names them (core/recompute_modules.h);
// they apply under `recompute: selective` (Megatron's --recompute-granularity selective), Megatron-LM and
// NeMo only. Elements are read in place (see read_run_layout on yaml-cpp's node memory).
void read_run_recompute(Reader& r, const YAML::Node& n, const std::string& path, ValidationRun& run) {
  if (!Reader::has(n, "recompute_modules")) return;
  const std::string where = path + ".recompute_modules";
  const YAML::Node list = n["recompute_modules"];
  if (!list.IsSequence() || list.size() == 0) {
    r.fail(where, node_text(list), "must be a non-empty list of module names", "e.g. [mla_up_proj, mlp]");
    return;
  }
  std::string names;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsScalar()) {
      r.fail(where + "[" + std::to_string(i) + "]", node_text(list[i]), "must be a module name", "e.g. moe_act");
      return;
    }
    names += (i ? "," : "") + list[i].Scalar();
  }
  std::string bad;
  const auto modules = parse_recompute_modules(names, &bad);
  if (!modules) {
    r.fail(where, bad, "unknown or repeated recompute module",
           "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe or shared_experts, each once");
    return;
  }
  if (run.framework != "megatron" && run.framework != "nemo")
    r.fail(where, run.framework, "are Megatron-Core's selective recompute modules",
           "framework: megatron or nemo, or drop the key");
  else if (run.recompute != Recompute::Selective)
    r.fail(where, to_string(run.recompute), "apply under recompute: selective (Megatron ignores them otherwise)",
           "recompute: selective, or drop the key");
  else
    run.recompute_modules = *modules;
}

}  // namespace meshplan::io_detail
