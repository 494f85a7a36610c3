// World: the state of every lane, mailbox and DP stream, and the one-action step function that
// both drivers (the event engine and the plain sweep reference) call. Internal to the simulator.
#pragma once
#include <cstdint>
#include <vector>

#include "simulator/program.h"
#include "simulator/sim_types.h"

namespace meshplan {

/// What a lane does after one step: go on at the same time, resume at `time_ns` (a compute op
/// started, or it waits for something that will be ready then), or block until woken.
struct Step {
  enum Kind { Continue, Yield, Wait, Block } kind = Continue;
  Nanoseconds time_ns = 0;
};

/// A blocked lane that a step made runnable again, and when.
struct Wake {
  Nanoseconds time_ns = 0;
  int32_t lane = 0;
};

/// The expert all-to-all of one op of one rank in one EP group: how many members reached it, when.
struct ExpertJoin {
  int arrived = 0;
  Nanoseconds ready_ns = 0;  // the latest arrival: when the all-to-all can run
};

/// One DP-group collective of one rank (bucket reduction or ZeRO gather), joined across replicas.
struct Collective {
  int arrived = 0;          // replicas that issued it
  Nanoseconds issue_max_ns = 0;
  Nanoseconds dur_ns = 0;
  Nanoseconds end_ns = -1;  // -1 until every replica issued it
  int32_t micro_batch = -1;
  int16_t chunk = 0;
  ActionKind kind = ActionKind::ReduceGrads;
};

struct LaneState {
  int pc = 0;                     // next op
  int piece = 0;                  // next piece of the current (ZeRO-3) compute op
  Nanoseconds op_start_ns = 0;    // start of the current compute op's first piece
  Nanoseconds p2p_free_ns = 0;    // the lane's p2p stream is busy until then
  Nanoseconds idle_since_ns = -1; // compute stream waiting since (-1: not waiting)
  int32_t blocked_slot = -1;      // waiting for this mailbox slot's message
  int32_t blocked_coll = -1;      // waiting for this collective of its rank
  int32_t coll_next = 0;          // collectives issued so far
  int32_t piece_coll = -1;        // gather the current piece waits for
  int32_t prefetch_coll = -1;     // gather already issued for the next gathered op's first piece
  int reduced_piece = 0;          // the piece whose finished layer last went to the DP stream
  int32_t after_coll = -1;        // ZeRO-1/2 gather after the optimizer
  int32_t blocked_join = -1;      // MoE: waiting at this op for its expert-parallel group
  int32_t joined_pc = -1;         // MoE: has arrived at the expert join of this op
  bool done = false;
  std::vector<Nanoseconds> grad_start_ns, grad_dur_ns;  // per local chunk: last gradient-producing op
  double live_bytes = 0;
  int live = 0;
  LaneStats stats;
};

class World {
 public:
  World(const Program& p, bool record_spans);

  /// Runs op `pc` of `lane` at time `now` (the lane is not finished). Lanes made runnable are
  /// appended to `wake`.
  Step step(int lane, Nanoseconds now, std::vector<Wake>& wake);
  /// Called when the lane has run all its ops: ZeRO-1/2 gather after the optimizer, then done
  /// (returns Block once done: nothing more to schedule).
  Step finish_lane(int lane, Nanoseconds now, std::vector<Wake>& wake);
  /// Fills and returns the result once every lane is done.
  SimResult finish();

  const Program& p;
  std::vector<LaneState> lanes;
  std::vector<Nanoseconds> arrive_ns, sent_ns;      // per mailbox slot (-1 = not sent)
  std::vector<std::vector<Collective>> colls;       // per rank, in issue order
  std::vector<Nanoseconds> dp_free_ns;              // per rank: the shared DP-group stream
  std::vector<std::vector<std::pair<Nanoseconds, Nanoseconds>>> dp_busy;  // per rank, in order
  std::vector<std::vector<int>> next_gathered;      // per lane, per op: next op with pieces > 1 (or -1)
  std::vector<std::vector<ExpertJoin>> ep_joins;    // per (EP group, rank), per op (MoE only)
  int done_lanes = 0;
  SimResult res;

 private:
  Step compute(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake);
  Step compute_piece(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake);
  Step send(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake);
  Step receive(int lane, const Op& op, Nanoseconds now);
  Step reduce(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake);
  Step optimizer(int lane, const Op& op, Nanoseconds now);
  Step expert_join(int lane, Nanoseconds now, std::vector<Wake>& wake);
  Step wait_for_coll(int lane, int32_t k, Nanoseconds now, Nanoseconds& wait_ns);
  int32_t issue(int lane, Nanoseconds at, Nanoseconds dur, ActionKind kind, int chunk, int mb,
                std::vector<Wake>& wake);
  void complete(int rank, int32_t k, std::vector<Wake>& wake);
  void begin_op(LaneState& s, const Op& op, Nanoseconds start);
  void end_op(LaneState& s, const Op& op, Nanoseconds end);
  Nanoseconds stretch(int lane, Nanoseconds start, Nanoseconds dur) const;
  void reduce_bucket(int lane, const Op& op, int bucket, Nanoseconds ready, std::vector<Wake>& wake);
  void reduce_finished_layer(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake);
  void span(int lane, Stream st, ActionKind k, int mb, int chunk, Nanoseconds a, Nanoseconds b, int piece = 0);
  bool spans_;
};

}  // namespace meshplan
