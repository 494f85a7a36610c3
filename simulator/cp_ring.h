// Context-parallel ring attention of one layer as events: per ring step, each of the cp ranks
// computes attention on the K/V chunk it holds while the next chunk (and, in backward, the
// accumulated dK/dV) travels to its ring neighbour; checks against the cost model's closed form.
#pragma once
#include <cstdint>
#include <vector>

#include "core/parallel_config.h"
#include "core/units.h"
#include "simulator/analysis.h"

namespace meshplan {

/// One busy interval of the ring: a rank's attention on one chunk, or one transfer it sends.
struct CpRingSpan {
  int rank = 0;
  int step = 0;          // ring step 0..cp-1 (backward: the step whose dK/dV is sent)
  int chunk = 0;         // the K/V chunk (its owner rank)
  bool backward = false;
  bool transfer = false;  // false: attention compute on `rank`; true: send from `rank` to rank+1
  bool grads = false;     // backward transfers: true = the dK/dV accumulator, false = K/V
  Nanoseconds start_ns = 0, end_ns = 0;
};

struct CpRingResult {
  Nanoseconds forward_ns = 0;    // one layer's ring attention forward, first compute to last
  Nanoseconds backward_ns = 0;   // backward, until every dK/dV is back at its owner
  int64_t events = 0;            // spans simulated (compute + transfers, both passes)
  std::vector<CpRingSpan> spans;
};

/// Simulates the ring on cp ranks. Per rank one compute stream and one outgoing link, both serial.
/// Forward: rank r holds chunk (r - i) mod cp at step i; the send of that chunk to rank r+1 starts
/// with the step (Transformer Engine posts the next step's send/recv before its attention kernel)
/// once the link is free; step i+1 starts when step i is done and its chunk has arrived.
/// Backward: the same K/V ring, and after each step's attention the updated dK/dV of that chunk
/// follows it to rank r+1 (it must arrive before the receiver's next step may finish); after the
/// last step one more dK/dV hop returns every accumulator to its owner.
CpRingResult simulate_cp_ring(int cp, Nanoseconds step_forward_ns, Nanoseconds step_backward_ns, Nanoseconds hop_ns);

/// Checks of a ring simulation: every step's compute starts after its chunk arrived from the
/// neighbour that held it one step earlier, every rank saw every chunk once, every dK/dV returned
/// to its owner, and the simulated forward and backward equal the cost model's closed form
/// (costmodel/context_parallel.h: cp steps of compute plus the exposed communication): forward
/// within one nanosecond per step (integer rounding); backward at most that closed form and at
/// least it minus one steady-state step max(c, 2h) (the closed form charges the first step, which
/// waits for no dK/dV, like the others; exact when the exchange hides, 2h <= c).
Check cp_ring_check(const Problem& p, const ParallelConfig& cfg);

}  // namespace meshplan
