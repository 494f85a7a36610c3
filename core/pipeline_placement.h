// Which model chunks each pipeline rank holds: looped (chunk k of rank r is model chunk k*pp + r) or
// V-shaped (DualPipeV: rank r holds model chunks r and 2pp-1-r), and the DualPipeV layout rules.
#pragma once
#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// True for schedules whose two chunks per rank are placed in a V: the forward runs down the ranks
/// through the first half of the layers and back up through the second, so rank 0 holds both the
/// embedding and the LM head (torch.distributed.pipelining generate_stage_to_rank_mapping style "v").
inline bool v_shaped(ScheduleKind s) { return s == ScheduleKind::DualPipeV; }

/// Model chunk (0 .. pp*v-1, in layer order) held by pipeline rank `rank` as its local chunk `local`.
/// Inline: the simulator's program compiler and the cost model's stage loops call it per action.
inline int placed_chunk(ScheduleKind s, int pp, int rank, int local) {
  if (v_shaped(s)) return local == 0 ? rank : 2 * pp - 1 - rank;
  return local * pp + rank;
}
inline int placed_chunk(const ParallelConfig& c, int rank, int local) {
  return placed_chunk(c.schedule, c.pp, rank, local);
}
/// Pipeline rank holding model chunk `chunk`, and its local index there.
inline int chunk_rank(ScheduleKind s, int pp, int chunk) {
  if (v_shaped(s)) return chunk < pp ? chunk : 2 * pp - 1 - chunk;
  return chunk % pp;
}
inline int chunk_local_index(ScheduleKind s, int pp, int chunk) {
  if (v_shaped(s)) return chunk < pp ? 0 : 1;
  return chunk / pp;
}

/// The pipeline ranks holding the first model chunk (embedding) and the last (LM head and loss).
inline int first_chunk_rank(const ParallelConfig&) { return 0; }
int last_chunk_rank(const ParallelConfig& c);

/// DualPipeV's rules (torch.distributed.pipelining ScheduleDualPipeV): exactly two chunks per rank
/// (--virtual-stages 2), pp >= 2, and at least as many micro-batches as model chunks (2pp).
void check_dualpipev(const ParallelConfig& c, const std::string& where, ErrorList& e);

}  // namespace meshplan
