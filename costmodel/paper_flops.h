// FLOP counts as the publishers of validation runs count them (`flops_formula`, validation/README.md), to turn
// a published TFLOP/s or MFU into seconds per iteration.
#pragma once
#include <string>

#include "core/model_spec.h"

namespace meshplan {

/// FLOPs of one iteration of B sequences of s tokens under the named convention ("megatron", "megatron-core",
/// "megatron-core-moe", "mosaic", "palm", "torchtitan"; anything else: meshplan's own model FLOPs). `m`
/// carries the run's MTP modules (ModelSpec::mtp_layers) where the convention counts them.
double paper_flops(const std::string& formula, const ModelSpec& m, double B, double s);

/// Megatron-LM's num_floating_point_operations for MoE, MLA, GQA and MTP models (training.py at d48bd6be, the
/// count behind Megatron-LM's and Megatron-Bridge's "model TFLOP/s"): attention core halved for the causal mask.
double megatron_core_moe_formula_flops(const ModelSpec& m, double B, double s);

}  // namespace meshplan
