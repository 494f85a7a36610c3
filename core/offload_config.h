// Megatron-Core's rules for activation offloading (--cpu-offloading-num-layers), with named reasons.
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Errors for a configuration that FrameworkKnobs::activation_offload_layers = n > 0 cannot run with,
/// as Megatron-Core's TransformerConfig.__post_init__ refuses it (megatron/core/transformer/
/// transformer_config.py): n >= num_layers ("CPU offloading can be done only for layers less than
/// num_layers"), pp > 1 ("Currently there is no support for Pipeline parallelism with CPU offloading"),
/// any recomputation ("CPU offloading does not work when activation recomputation is enabled"); and a
/// hardware profile without node.host_link, whose copies could not be costed. Empty when n = 0. That
/// only Megatron-LM and NeMo run it is checked where the job is built (cli/feature_options.cpp).
ErrorList validate_offload_config(const Problem& p, const ParallelConfig& cfg, const std::string& where);
/// The part that holds for every configuration (n < num_layers, a host link in the profile), which the
/// CLI checks once when it builds the job; validate_offload_config includes it.
ErrorList validate_offload_job(const ModelSpec& model, const HardwareProfile& hw, int offload_layers,
                               const std::string& where);

}  // namespace meshplan
