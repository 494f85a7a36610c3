// Activation offloading to host memory (Megatron-Core --cpu-offloading, Transformer Engine's handler):
// which layers' saved activations stay in HBM, and the copy time the compute stream waits for.
#pragma once
#include "core/parallel_config.h"

namespace meshplan {

/// Layers of a stage of `layers` whose saved activations are resident in HBM at the memory peak when
/// FrameworkKnobs::activation_offload_layers = n > 0 (else `layers`): L - n + 1.
/// Transformer Engine's AsyncDoubleBufferGroupOffloadHandler (transformer_engine/pytorch/cpu_offload.py,
/// the handler Megatron-Core's get_cpu_offload_context builds) offloads the tensors of groups (layers)
/// 0..n-1 and frees group i once the copy-stream sync at layer window w_i = floor(L/n)(i+1) - 1 (+ the
/// remainder spread) has passed; the last group is freed at layer L-1, when the forward ends, and its
/// reload is issued at the first backward layer (w_{n-1} = L-1). At the forward/backward turn the GPU
/// therefore holds the L - n layers never offloaded plus that one reloaded group. Megatron-Core asks
/// n < L (transformer_config.py), so the result is at least 2 layers there.
double offload_resident_layers(const Problem& p, int layers);

/// Copy time of one micro-batch that the compute stream waits for (seconds), forward and backward.
struct OffloadTime {
  double forward_s = 0.0;
  double backward_s = 0.0;
};

/// Each offloaded group's copy (one layer's saved activations, `layer_bytes`, over the profile's host
/// link at its efficiency) runs on a side stream and must finish within its window of L/n layers: the
/// compute stream waits for it at the next window (both directions: d2h_stream in the forward, the
/// reload on h2d_stream one window ahead in the backward). Exposed per micro-batch:
///   forward  = n * max(0, A/B - (L/n) * t_f),  backward = n * max(0, A/B - (L/n) * t_b)
/// with A = layer_bytes, B = host bandwidth x efficiency, t_f / t_b one layer's forward / backward time.
/// Zero when offloading is off or the profile lists no host link (the configuration check refuses that).
OffloadTime offload_exposed(const Problem& p, double layer_bytes, int layers, double layer_forward_s,
                            double layer_backward_s);

}  // namespace meshplan
