// When no configuration fits: one Error saying why and what would make the problem solvable
// (more GPUs, a larger batch, a smaller micro-batch, recomputation, lifting a narrowing flag).
#pragma once
#include <cstdint>

#include "core/error.h"
#include "core/parallel_config.h"
#include "planner/search.h"

namespace meshplan {

/// Fewest GPUs on which one copy of the model fits fully sharded: ZeRO-3 across every
/// data-parallel rank, full recomputation, micro-batch 1, TP inside a node, any pipeline depth
/// (one micro-batch in flight). A lower bound for the real job. 0 when no GPU count fits (one
/// layer's activations alone exceed the memory).
int64_t min_gpus_fully_sharded(const Problem& p);

/// The single most useful reason `r` (a search of `opt` over `p`) has no candidate, as an Error
/// for the command line: field and value name the flag at fault, the hint says what would fit.
/// Assumes r.top is empty.
Error diagnose_no_plan(const Problem& p, const SearchOptions& opt, const SearchResult& r);

}  // namespace meshplan
