// Pipeline schedules as data: per pipeline rank, the ordered list of actions one step performs.
// The simulator and the executor interpret these same objects, so they cannot drift apart.
#pragma once
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"
#include "core/pipeline_placement.h"

namespace meshplan {

enum class ActionKind {
  Forward,         // "F":  forward of one micro-batch through one model chunk
  Backward,        // "B":  backward (input grad; also weight grad unless the schedule has W actions)
  BackwardWeight,  // "W":  weight-gradient half of backward (zero-bubble schedules only)
  SendForward,     // "SF": send activations to the next stage (peer = next pipeline rank)
  RecvForward,     // "RF": receive activations from the previous stage
  SendBackward,    // "SB": send input gradients to the previous stage
  RecvBackward,    // "RB": receive output gradients from the next stage
  ReduceGrads,     // "R":  DP gradient reduction (all-reduce or ZeRO reduce-scatter) of one chunk
  OptimizerStep,   // "O":  optimizer step; ends the step
};
const char* to_string(ActionKind k);  // the short codes above
/// F, B or W: runs on the rank's compute stream.
bool is_compute(ActionKind k);
/// SF, RF, SB or RB: point-to-point transfer between neighbouring pipeline ranks.
bool is_p2p(ActionKind k);

/// Semantics the simulator and the executor share:
/// - A rank runs its actions strictly in list order on one compute stream.
/// - Sends are non-blocking: SF/SB complete when issued (the transfer proceeds on a p2p stream).
///   A receive RF/RB blocks the rank until the matching send's data has arrived.
/// - `chunk` is always the local chunk of the rank holding the action. A send of (mb, chunk c on
///   rank r) matches the receive of the same micro-batch on the neighbouring model chunk:
///   SF on model chunk g = c*pp+r pairs with RF on model chunk g+1, SB on g with RB on g-1.
/// - R issues chunk `chunk`'s DP gradient reduction on the DP stream (non-blocking); O waits for
///   every R of the rank, then runs the optimizer on the compute stream.
struct Action {
  ActionKind kind = ActionKind::Forward;
  int micro_batch = -1;  // 0..M-1; -1 for R and O
  int chunk = 0;         // virtual stage on this rank: model chunk = chunk * pp + rank
  int peer = -1;         // pipeline rank on the other end of a send/recv; -1 otherwise
  bool operator==(const Action& o) const {
    return kind == o.kind && micro_batch == o.micro_batch && chunk == o.chunk && peer == o.peer;
  }
};

struct Schedule {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int pp = 1;                 // pipeline ranks
  int virtual_stages = 1;     // v model chunks per rank
  int num_micro_batches = 1;  // M
  std::vector<std::vector<Action>> ranks;  // ranks[r] = actions of pipeline rank r, in order
};

/// Model chunk (0 .. pp*v-1, in layer order) of local chunk `chunk` on pipeline rank `rank`
/// (inline: the simulator's checks and compiler ask it for every action).
inline int model_chunk(const Schedule& s, int rank, int chunk) { return placed_chunk(s.kind, s.pp, rank, chunk); }
/// True when the backward is split into B and W actions (zero-bubble schedules).
bool has_weight_actions(const Schedule& s);

/// Compute-only order (F/B/W, then R per chunk and O) for each rank; no send/recv yet.
Result<Schedule> make_schedule(ScheduleKind kind, int pp, int virtual_stages, int num_micro_batches);
/// Inserts the RF/SF/RB/SB actions each compute action needs, in a deadlock-free order.
Schedule add_communication(const Schedule& s);
/// make_schedule + add_communication.
Result<Schedule> build_schedule(ScheduleKind kind, int pp, int virtual_stages, int num_micro_batches);

/// One line per rank: "rank 0: F0.0 F1.0 B0.0 ..." (action code, micro-batch, '.', chunk),
/// after a header line "# meshplan schedule: kind=1f1b pp=4 virtual_stages=1 micro_batches=8".
/// R prints as "R.<chunk>", O as "O"; send/recv peers are implied (the neighbouring rank).
std::string format_schedule(const Schedule& s);
/// Reads format_schedule's text back (for golden tests and hand-written schedules). The header
/// line is optional: pp = number of rank lines, v and M = largest chunk / micro-batch + 1.
/// Lines starting with '#' (other than the header) and blank lines are ignored.
Result<Schedule> parse_schedule_text(const std::string& text, const std::string& file);

/// Most forwards whose backward has not yet run, over time, on each rank (activation stashes).
/// With W actions (ZB-H1) a forward counts until its W, since dW still reads the layer inputs.
std::vector<int> max_in_flight(const Schedule& s);

}  // namespace meshplan
