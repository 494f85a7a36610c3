// Megatron-Core's activation-offloading rules (core/offload_config.h).
#include "core/offload_config.h"

namespace meshplan {

ErrorList validate_offload_job(const ModelSpec& m, const HardwareProfile& hw, int n, const std::string& w) {
  ErrorList e;
  if (n <= 0) return e;
  const char* flag = "--activation-offload-layers";
  const std::string value = std::to_string(n);
  if (n >= m.num_layers)
    e.push_back(make_error(w, flag, value,
                           "must be less than the model's " + std::to_string(m.num_layers) + " layers",
                           "Megatron-Core offloads at most num_layers - 1"));
  if (hw.host_link.bandwidth_bytes_per_s <= 0.0)
    e.push_back(make_error(w, flag, value, "needs the GPU-to-host bandwidth; profile " + hw.name +
                                               " lists no node.host_link",
                           "add node.host_link {bandwidth_gb_per_s, efficiency} to the profile"));
  return e;
}

ErrorList validate_offload_config(const Problem& p, const ParallelConfig& c, const std::string& w) {
  ErrorList e = validate_offload_job(p.model, p.hardware, p.job.knobs.activation_offload_layers, w);
  const int n = p.job.knobs.activation_offload_layers;
  if (n <= 0) return e;
  const char* flag = "--activation-offload-layers";
  const std::string value = std::to_string(n);
  if (c.pp > 1)
    e.push_back(make_error(w, flag, value, "cannot run with pipeline parallelism (pp=" + std::to_string(c.pp) + ")",
                           "use --pp 1, or drop --activation-offload-layers"));
  if (c.recompute != Recompute::None)
    e.push_back(make_error(w, flag, value, "cannot run with activation recomputation (" +
                                               std::string(to_string(c.recompute)) + ")",
                           "use --recompute none, or drop --activation-offload-layers"));
  return e;
}

}  // namespace meshplan
