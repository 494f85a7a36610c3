// Estimate JSON details of context parallelism and gradient compression (cli/feature_options.cpp).
#pragma once
#include "cli/report_json.h"
#include "core/parallel_config.h"

namespace meshplan::cli {

/// Estimate details of the features in use: "context_parallel" (cp > 1: exchange, K/V chunk
/// bytes, per-layer ring step and exposed time) and "grad_compression" (bytes sent and the
/// uncompressed size per step, communication and compression seconds, warm-up steps; pipeline
/// stage 0). Absent otherwise.
void add_estimate_features(ojson& estimate, const Problem& p, const ParallelConfig& c);

}  // namespace meshplan::cli
