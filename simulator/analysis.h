// Reading a SimResult: bubble fraction, the critical lane's time breakdown, peak activation memory
// per stage, and checks of the simulated order (dependencies, exactly-once) from the spans.
#pragma once
#include <string>
#include <vector>

#include "planner/schedule.h"
#include "simulator/sim_types.h"

namespace meshplan {

/// One named check with its outcome and a one-line detail (DESIGN.md simulate "checks").
struct Check {
  std::string name;
  bool ok = false;
  std::string detail;
};

/// Exposed time on one lane, seconds. compute + tp_comm + bubble + pp_comm + dp_comm +
/// zero3_gather + optimizer + tail = the step (tail: idle after this lane ended, 0 on the critical lane).
struct Breakdown {
  double compute_s = 0;       // F/B/W without the TP communication inside them
  double tp_comm_s = 0;       // TP collectives inside layers
  double bubble_s = 0;        // pipeline fill/drain waits
  double pp_comm_s = 0;       // waits while an awaited activation/gradient was on the wire
  double dp_comm_s = 0;       // waits for DP reductions and ZeRO-1/2 gathers (and slower replicas)
  double zero3_gather_s = 0;  // ZeRO-3 gathers not hidden by prefetch
  double optimizer_s = 0;
  double tail_s = 0;
};

struct StageReport {
  int stage = 0;
  double peak_activation_bytes = 0;  // simulated, replica 0
  int peak_chunks = 0;               // micro-batch-chunks stashed at that peak
  double peak_in_flight = 0;         // the same in whole-stage micro-batches (peak_chunks / v)
};

struct SimSummary {
  double step_s = 0;
  double pipeline_s = 0;        // until the last F/B/W of replica 0
  double bubble_fraction = 0;   // replica 0: mean over ranks of idle-in-pipeline (not comm) / pipeline_s
  int critical_lane = 0;        // the lane that ends last (first of equals)
  Breakdown critical;
  std::vector<StageReport> stages;
  int worst_stage = 0;          // largest peak_activation_bytes
};

SimSummary summarize(const SimResult& r);
Breakdown lane_breakdown(const SimResult& r, int lane);

/// From the spans (needs record_spans): every F/B/W ran exactly once per micro-batch and chunk on
/// every lane, F after the previous chunk's F, B after the next chunk's B and its own F, W after B.
Check verify_order(const Schedule& s, const SimResult& r);

/// "rank 3" or, with two simulated replicas, "replica 1 rank 3".
std::string lane_name(const SimResult& r, int lane);

}  // namespace meshplan
