// Validation-run keys of the pipeline layout, multi-token prediction and the MoE dispatcher:
// layers_per_stage, mtp_layers, moe_dispatcher.
#include <yaml-cpp/yaml.h>

#include "core/io_detail.h"
#include "core/limits.h"
#include "core/moe_dispatcher.h"
#include "core/validation_runs.h"

namespace meshplan::io_detail {

// layers_per_stage: transformer layers of each of the pp x v model chunks in model order, as Megatron's
// --pipeline-model-parallel-layout gives them (checked against the model and pp x v when the run is
// costed, core/parallel_config.cpp). mtp_layers: the run's MTP modules (Megatron-Core --mtp-num-layers),
// overriding its model's; Megatron-LM and NeMo only. moe_dispatcher: below.
void read_run_layout(Reader& r, const YAML::Node& n, const std::string& path, ValidationRun& run) {
  if (Reader::has(n, "layers_per_stage")) {
    const YAML::Node list = n["layers_per_stage"];
    if (!list.IsSequence() || list.size() == 0) {
      r.fail(path + ".layers_per_stage", node_text(list), "must be a non-empty list of layer counts",
             "e.g. [4, 4, 4, 1]: one count per pipeline chunk");
    } else {
      // Each element read in place: a YAML::Node built around it would merge the document's node memory
      // into its own on every assignment (yaml-cpp), quadratic in the file's size.
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string where = path + ".layers_per_stage[" + std::to_string(i) + "]";
        int64_t v = -1;
        try {
          v = list[i].as<int64_t>();
        } catch (const YAML::Exception&) {
          r.fail(where, node_text(list[i]), "must be a layer count", "transformer layers of that chunk, e.g. 4");
          return;
        }
        if (v < 0 || v > limits::kMaxLayers) {
          r.fail(where, std::to_string(v), "must be in " + limits::range_text(0, limits::kMaxLayers),
                 "transformer layers of that chunk");
          return;
        }
        run.layers_per_stage.push_back(static_cast<int>(v));
      }
    }
  }
  if (Reader::has(n, "mtp_layers")) {
    run.mtp_layers = r.integer(n, "mtp_layers", path + ".mtp_layers", int64_t{0}, "MTP modules, e.g. 1");
    if (*run.mtp_layers < 0 || *run.mtp_layers > limits::kMaxMtpLayers)
      r.fail(path + ".mtp_layers", std::to_string(*run.mtp_layers),
             "must be in " + limits::range_text(0, limits::kMaxMtpLayers), "DeepSeek-V3 trains 1");
    else if (*run.mtp_layers > 0 && run.framework != "megatron" && run.framework != "nemo")
      r.fail(path + ".mtp_layers", run.framework, "is Megatron-Core's multi-token prediction",
             "framework: megatron or nemo, or drop the key");
  }
  // moe_dispatcher: Megatron-Core's token dispatcher of the run (core/moe_dispatcher.h); absent = alltoall.
  run.moe_dispatcher = r.text(n, "moe_dispatcher", path + ".moe_dispatcher", std::string(), "alltoall|deepep|hybridep");
  if (!run.moe_dispatcher.empty()) {
    const auto d = parse_moe_dispatcher(run.moe_dispatcher);
    if (!d)
      r.fail(path + ".moe_dispatcher", run.moe_dispatcher, "unknown dispatcher", "alltoall, deepep or hybridep");
    else if (*d != MoeDispatcher::AllToAll && run.framework != "megatron" && run.framework != "nemo")
      r.fail(path + ".moe_dispatcher", run.framework, "is Megatron-Core's flex dispatcher",
             "framework: megatron or nemo, or drop the key");
  }
}

}  // namespace meshplan::io_detail
