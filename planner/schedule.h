// Pipeline schedules as data: per pipeline rank, the ordered list of actions one step performs.
// The simulator and the executor interpret these same objects, so they cannot drift apart.
#pragma once
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"

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

/// Compute-only order (F/B/W, then R per chunk and O) for each rank; no send/recv yet.
Result<Schedule> make_schedule(ScheduleKind kind, int pp, int virtual_stages, int num_micro_batches);
/// Inserts the RF/SF/RB/SB actions each compute action needs, in a deadlock-free order.
Schedule add_communication(const Schedule& s);
/// make_schedule + add_communication.
Result<Schedule> build_schedule(ScheduleKind kind, int pp, int virtual_stages, int num_micro_batches);

/// One line per rank: "rank 0: F0.0 F1.0 B0.0 ..." (action code, micro-batch, '.', chunk).
std::string format_schedule(const Schedule& s);
/// Reads format_schedule's text back (for golden tests and hand-written schedules).
Result<Schedule> parse_schedule_text(const std::string& text, const std::string& file);

/// Most forwards whose backward has not yet run, over time, on each rank (activation stashes).
std::vector<int> max_in_flight(const Schedule& s);

}  // namespace meshplan
