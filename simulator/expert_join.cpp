// World::expert_join: the MoE dispatch/combine all-to-all as a join of the expert-parallel group.
// Every lane of one pipeline rank in one EP group (program.h ep_group consecutive replicas) runs the
// same op list; an F/B whose chunk has expert all-to-all cannot start its all-to-all before every
// member has reached it, so the op starts at the latest arrival. Lanes that arrive early block and
// are woken then; the time they idle counts as waiting for other replicas (dp_wait_ns). A member
// that never arrives leaves the others blocked, which the deadlock check reports by name.
#include <algorithm>

#include "simulator/lane_state.h"

namespace meshplan {

Step World::expert_join(int lane, Nanoseconds now, std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  const int rank = p.rank_of(lane), group = p.replica_of(lane) / p.ep_group;
  ExpertJoin& j = ep_joins[static_cast<size_t>(group * p.pp + rank)][static_cast<size_t>(s.pc)];
  if (s.joined_pc != s.pc) {  // first time at this op: arrive
    s.joined_pc = s.pc;
    ++j.arrived;
    j.ready_ns = std::max(j.ready_ns, now);
    if (j.arrived == p.ep_group) {
      for (int q = group * p.ep_group; q < (group + 1) * p.ep_group; ++q) {
        const int other = q * p.pp + rank;
        LaneState& o = lanes[other];
        if (other != lane && o.blocked_join == s.pc) {
          o.blocked_join = -1;
          wake.push_back(Wake{j.ready_ns, other});
        }
      }
    }
  }
  if (j.arrived < p.ep_group || j.ready_ns > now) {
    if (s.idle_since_ns < 0) s.idle_since_ns = now;
    if (j.arrived < p.ep_group) {
      s.blocked_join = s.pc;
      return Step{Step::Block, 0};
    }
    return Step{Step::Wait, j.ready_ns};
  }
  if (s.idle_since_ns >= 0) {
    s.stats.dp_wait_ns += now - s.idle_since_ns;
    s.idle_since_ns = -1;
  }
  s.joined_pc = -1;
  return Step{};
}

}  // namespace meshplan
