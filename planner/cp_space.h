// Context-parallel degrees the planner tries: only where CP can help (long sequences).
#pragma once
#include <vector>

#include "core/parallel_config.h"
#include "planner/enumerate.h"

namespace meshplan {

/// CP is worth trying once one sequence's activations dominate: from kCpMinSeq tokens on, and
/// only down to kCpMinLocalTokens tokens per GPU (below that a ring step's attention block is too
/// small to hide its K/V exchange, and TP/PP split the work more cheaply). Megatron-Core's
/// docs/source/api-guide/context_parallel.rst illustrates CP with an 8K-token sequence split
/// into 4K tokens per GPU: the smallest case searched here. NVIDIA's MLPerf Training v5.1 Llama 3.1 8B
/// runs on 512 GB200 / GB300 go further (CP 4 of 8192 tokens, TP 2), and the cost model predicts both
/// 36-39 % too fast (costmodel/README.md, thirty-sixth session): the search stays out of that regime.
constexpr int64_t kCpMinSeq = 8192;
constexpr int64_t kCpMinLocalTokens = 4096;

/// The --cp list when given, else {1} and every c >= 2 dividing the GPU count with
/// seq % (2c) == 0 (causal load balancing), seq / c >= kCpMinLocalTokens, and, for the a2a
/// exchange, heads and kv heads divisible by c; {1} below kCpMinSeq or with materialized attention.
std::vector<int> cp_domain(const Problem& p, const SearchSpace& s);

}  // namespace meshplan
