// cli-internal: the JSON objects behind report.h and plan_file.h (nlohmann stays inside cli/).
#pragma once
#include <nlohmann/json.hpp>

#include "core/parallel_config.h"
#include "costmodel/estimate.h"

namespace meshplan::cli {

using ojson = nlohmann::ordered_json;

/// A rounded number for reports: 6 significant digits (integral values print without ".0").
ojson report_number(double v);
/// Bytes as an integer.
ojson report_bytes(double bytes);

/// {"gpus","global_batch","seq_len","dtype","attention","bytes_per_param": {...},"allow_tp_across_nodes"}.
ojson job_object(const Job& job);
/// DESIGN.md "config" keys + dp_overlap, layers_per_stage.
ojson config_object(const ParallelConfig& c);
/// The whole meshplan.estimate/1 object (see report.h).
ojson estimate_object(const Problem& p, const StepEstimate& e);
/// {"tool","version","git_sha","inputs_fnv1a64"}.
ojson provenance_object(const Problem& p);

}  // namespace meshplan::cli
