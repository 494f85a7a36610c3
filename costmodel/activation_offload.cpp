// Activation offloading: resident layers and exposed copy time (costmodel/activation_offload.h).
#include "costmodel/activation_offload.h"

#include <algorithm>

namespace meshplan {

double offload_resident_layers(const Problem& p, int layers) {
  const int n = p.job.knobs.activation_offload_layers;
  if (n <= 0 || layers <= 0) return static_cast<double>(layers);
  return static_cast<double>(std::clamp(layers - n + 1, 1, layers));
}

OffloadTime offload_exposed(const Problem& p, double layer_bytes, int layers, double layer_forward_s,
                            double layer_backward_s) {
  OffloadTime out;
  const int n = std::min(p.job.knobs.activation_offload_layers, layers);
  const LinkSpec& link = p.hardware.host_link;
  const double bw = link.bandwidth_bytes_per_s * link.efficiency;
  if (n <= 0 || bw <= 0.0 || layer_bytes <= 0.0) return out;
  const double copy_s = layer_bytes / bw;
  const double window = static_cast<double>(layers) / n;  // layers of compute per offloaded group
  out.forward_s = n * std::max(0.0, copy_s - window * layer_forward_s);
  out.backward_s = n * std::max(0.0, copy_s - window * layer_backward_s);
  return out;
}

}  // namespace meshplan
