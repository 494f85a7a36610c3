// Static checks of a schedule before it is simulated: every micro-batch's F/B(/W) exactly once per
// chunk in a valid order, every receive matched by a send on the neighbour, R and O in place.
#pragma once
#include <string>

#include "core/error.h"
#include "planner/schedule.h"

namespace meshplan {

/// The first defect as an Error (file = `file`, field = "rank r", value = the action(s) at fault),
/// e.g. "receive without send: rank 1 RF3.0 has no matching SF3.0 on rank 0". Deadlocks (cycles of
/// waiting ranks) are found by the simulation itself, not here.
Result<bool> check_schedule(const Schedule& s, const std::string& file);

/// True when the schedule has no send/recv actions at all (a compute-only order that
/// add_communication can complete).
bool lacks_communication(const Schedule& s);

/// "F3.1"-style text of one action (as in the schedule file).
std::string action_label(const Action& a);

}  // namespace meshplan
