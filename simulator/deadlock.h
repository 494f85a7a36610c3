// Deadlock report: when no event is left but some lanes have actions left, the cycle of waiting
// ranks and the actions they are blocked at, as one Error line.
#pragma once
#include <string>

#include "core/error.h"
#include "simulator/lane_state.h"

namespace meshplan {

/// Follows "waits for" edges from the first stuck lane until a lane repeats (a cycle) or a lane
/// that already finished (a receive whose send never comes). Assumes at least one lane is stuck.
Error deadlock_error(const Program& p, const World& w, const std::string& file);

}  // namespace meshplan
