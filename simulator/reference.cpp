// simulate_reference: the engine's plain twin. Sweeps the lanes in index order, running each one
// as far as it can go, until a sweep makes no progress; no event queue, no time ordering. Because
// every interaction is a max() over write-once times, the result must equal the engine's exactly.
#include <vector>

#include "simulator/deadlock.h"
#include "simulator/engine.h"
#include "simulator/lane_state.h"
#include "simulator/program.h"
#include "simulator/schedule_check.h"

namespace meshplan {

Result<SimResult> simulate_reference(const SimInput& in, const std::string& file) {
  auto ok = check_schedule(in.schedule, file);
  if (!ok) return ok.error();
  const Program p = compile_program(in);
  World w(p, in.record_spans);
  std::vector<Nanoseconds> resume(p.lanes, 0);  // when each lane can go on
  std::vector<Wake> wake;
  int64_t steps = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (int l = 0; l < p.lanes; ++l) {
      LaneState& s = w.lanes[l];
      while (!s.done && s.blocked_slot < 0 && s.blocked_coll < 0 && s.blocked_join < 0) {
        const bool at_end = s.pc == static_cast<int>(p.ops[l].size());
        const Step st = at_end ? w.finish_lane(l, resume[l], wake) : w.step(l, resume[l], wake);
        ++steps;
        for (const Wake& wk : wake) resume[wk.lane] = wk.time_ns;
        wake.clear();
        if (st.kind == Step::Block) break;
        if (st.kind != Step::Continue) resume[l] = st.time_ns;
        progress = true;
      }
    }
  }
  if (w.done_lanes < p.lanes) return deadlock_error(p, w, file);
  SimResult r = w.finish();
  r.events = steps;
  return r;
}

}  // namespace meshplan
