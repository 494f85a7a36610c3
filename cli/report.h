// Human tables and JSON/YAML reports of estimates (DESIGN.md "JSON output contract"), as plain text.
#pragma once
#include <string>

#include "core/parallel_config.h"
#include "costmodel/estimate.h"

namespace meshplan::cli {

/// "meshplan.estimate/1" object: schema, config, memory, time, throughput, fits (DESIGN.md keys)
/// plus extras: bottleneck, usable_memory_bytes, worst_stage, model/hardware names, job,
/// bytes_per_param convention and provenance {tool, version, git_sha, inputs_fnv1a64}.
/// Bytes are printed as integers, other numbers with 6 significant digits: deterministic.
std::string estimate_json(const Problem& p, const StepEstimate& e);
std::string estimate_yaml(const Problem& p, const StepEstimate& e);
/// Aligned text table for humans (memory in GB = 1e9 bytes, time in seconds and %).
std::string estimate_table(const Problem& p, const StepEstimate& e);

/// Dispatches on `format` ("table" | "json" | "yaml"; assumed checked by check_format).
std::string render_estimate(const Problem& p, const StepEstimate& e, const std::string& format);

/// Any JSON text re-emitted as block YAML (keys in the JSON's order); forwards to core's json_to_yaml.
std::string json_text_to_yaml(const std::string& json_text);
/// Any JSON text in canonical form (2-space indent, shortest round-trip floats); core's format_json.
std::string json_text_pretty(const std::string& json_text);

/// Provenance object as JSON text: {"tool","version","git_sha","inputs_fnv1a64"}; the hash covers the
/// model (model_to_json), the hardware (hardware_to_yaml) and the job, so equal inputs hash equal.
std::string provenance_json(const Problem& p);

/// Number formatting shared by every report: 6 significant digits, no trailing zeros.
std::string format_number(double v);
/// Bytes as "12.34 GB" (1e9).
std::string format_gb(double bytes);

}  // namespace meshplan::cli
