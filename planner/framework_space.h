// The search space cut down to what the job's framework runs: domain restrictions used by
// enumerate.cpp (so the fast search and the plain enumerator see one space), and the check of the
// user's narrowing flags against the framework.
#pragma once
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/framework.h"
#include "planner/enumerate.h"

namespace meshplan {

/// TP values `f` runs (all, or only 1 when it has no tensor parallelism).
std::vector<int> framework_tp_domain(const FrameworkSpec& f, std::vector<int> tps);
/// PP values `f` runs: only 1 without pipeline parallelism; divisors of the layers when it needs
/// equal chunks.
std::vector<int> framework_pp_domain(const FrameworkSpec& f, int64_t num_layers, std::vector<int> pps);
/// A layout's schedules, ZeRO stages, recompute modes and SP settings cut to what `f` runs.
void restrict_to_framework(const FrameworkSpec& f, int64_t num_layers, LayoutDims& d);

/// The layouts Megatron-Core runs the job's --tp-comm-overlap and --overlap-param-gather on
/// (core/megatron_overlap.h): sequence parallelism at TP > 1; ZeRO 1 with the DP overlap on.
void restrict_to_megatron_overlaps(const Problem& p, LayoutDims& d);

/// One Error per narrowing flag asking only for values `f` never runs (e.g. --schedule zb-h1
/// under megatron), naming the framework and what it runs. Empty = the flags are consistent.
ErrorList check_space_for_framework(const FrameworkSpec& f, const SearchSpace& s);

}  // namespace meshplan
