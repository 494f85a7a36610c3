// simulate_schedule: the discrete-event engine (semantics in engine.h).
#include "simulator/engine.h"

#include <algorithm>
#include <cassert>

#include "simulator/deadlock.h"
#include "simulator/event_queue.h"
#include "simulator/lane_state.h"
#include "simulator/program.h"
#include "simulator/schedule_check.h"

namespace meshplan {

namespace {

class Engine {
 public:
  Engine(const Program& p, bool spans) : p_(p), w_(p, spans) {}

  Result<SimResult> run(const std::string& file) {
    q_.reserve(static_cast<size_t>(p_.lanes) * 2);
    for (int l = 0; l < p_.lanes; ++l) q_.push(0, l);
    while (!q_.empty()) {
      const Event e = q_.pop();
      ++w_.res.events;
      run_lane(e.lane, e.time_ns);
    }
    if (w_.done_lanes < p_.lanes) return deadlock_error(p_, w_, file);
    return w_.finish();
  }

 private:
  // Advances one lane from time `now` until it yields (a compute op started, or it must wait).
  void run_lane(int lane, Nanoseconds now) {
    LaneState& s = w_.lanes[lane];
    const auto& ops = p_.ops[lane];
    while (!s.done) {
      const bool at_end = s.pc == static_cast<int>(ops.size());
      const Step st = at_end ? w_.finish_lane(lane, now, wake_) : w_.step(lane, now, wake_);
      for (const auto& wk : wake_) q_.push(wk.time_ns, wk.lane);
      wake_.clear();
      switch (st.kind) {
        case Step::Continue: break;
        case Step::Yield:
        case Step::Wait:
          // Pushing this event and popping it again would hand it straight back whenever it is
          // strictly earlier than everything queued (a tie pops the older event first), so go on
          // directly: same order, same results, one heap round trip saved.
          if (q_.empty() || st.time_ns < q_.top_time_ns()) {
            now = st.time_ns;
            ++w_.res.events;
            break;
          }
          q_.push(st.time_ns, lane);
          return;
        case Step::Block: return;
      }
    }
  }

  const Program& p_;
  World w_;
  EventQueue q_;
  std::vector<Wake> wake_;
};

}  // namespace

Result<SimResult> simulate_schedule(const SimInput& in, const std::string& file) {
  auto ok = check_schedule(in.schedule, file);
  if (!ok) return ok.error();
  const Program p = compile_program(in);
  return simulate_program(p, in.record_spans, file);
}

Result<SimResult> simulate_program(const Program& p, bool record_spans, const std::string& file) {
  Engine e(p, record_spans);
  return e.run(file);
}

}  // namespace meshplan
