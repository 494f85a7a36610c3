// The event engine: runs a schedule's per-rank action lists over per-GPU compute, p2p and DP streams
// in integer nanoseconds, with a (time, sequence) event heap. Never hangs: a stuck state is a
// deadlock report naming the cycle of waiting ranks and their blocked actions.
#pragma once
#include <string>

#include "core/error.h"
#include "simulator/sim_types.h"

namespace meshplan {

/// Semantics (see planner/schedule.h for the action contract):
/// - Compute ops F/B/W/O run back to back on the lane's compute stream.
/// - SF/SB queue the message on the sender's p2p stream (transfers serialise there) and return at
///   once; RF/RB block until the message has arrived.
/// - R splits the chunk's reduction into one bucket per layer; bucket b becomes ready when the
///   chunk's last gradient-producing op (B, or W in ZB-H1) has done (b+1)/layers of its work, so
///   buckets overlap the rest of that backward. ZeRO-2/3 instead reduce-scatter every
///   micro-batch's layer buckets as its gradient-producing op makes them (R then adds nothing).
///   O waits for every DP collective of its lane.
/// - ZeRO-3: each layer of F and B waits for its all-gather (in B twice for the layers DeepSpeed
///   re-fetches for their recomputed forward: ChunkTimes::refetch_layers); the gather of the next
///   piece is issued when the current one starts (one layer of prefetch, across ops too).
/// - DP collectives (R buckets, ZeRO gathers) run on one DP stream per rank in issue order and
///   start only when every simulated replica of that rank has issued them (a straggler in one
///   replica delays all of them).
/// Errors: check_schedule's defects, or "deadlock" with the cycle of waiting ranks.
Result<SimResult> simulate_schedule(const SimInput& in, const std::string& file = "schedule");

struct Program;
/// The event loop alone on an already checked and compiled program (compile_program); for
/// benchmarks that time the loop separately from checking and compiling.
Result<SimResult> simulate_program(const Program& p, bool record_spans, const std::string& file = "schedule");

/// The same semantics computed by plain repeated sweeps over the lanes (no event queue); used by
/// tests to check the engine. Slower (quadratic in the worst case); same results.
Result<SimResult> simulate_reference(const SimInput& in, const std::string& file = "schedule");

}  // namespace meshplan
