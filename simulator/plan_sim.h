// One plan (problem + configuration) through the simulator: schedule, cost-model durations,
// simulation, summary and every check DESIGN.md's simulate report lists.
#pragma once
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"
#include "costmodel/estimate.h"
#include "simulator/analysis.h"
#include "simulator/durations.h"

namespace meshplan {

struct PlanSimulation {
  Schedule schedule;              // what was simulated (with send/recv)
  SimResult result;
  SimSummary summary;
  StepEstimate estimate;          // the closed form for the same plan
  StepCosts costs;
  std::vector<double> model_in_flight;  // cost model's micro-batches in flight per stage
  double closed_form_bubble = 0;  // bubble_fraction(kind, P, v, M)
  double uniform_bubble = 0;      // simulated bubble of this schedule with equal stages, no comm
  std::vector<Check> checks;      // schedule, order, deadlock, memory, bubble, estimate
  bool custom_schedule = false;
};

/// `custom`: a hand-written schedule (nullptr = build cfg.schedule); its shape (pp, v, M) must
/// match cfg. `schedule_file` names it in errors. Errors: option/shape problems, schedule defects,
/// deadlocks (one line naming ranks and actions).
Result<PlanSimulation> simulate_plan(const Problem& p, const ParallelConfig& cfg, const SimOptions& o,
                                     const Schedule* custom = nullptr,
                                     const std::string& schedule_file = "schedule");

/// The schedule alone with equal unit chunks (F 1 ms, B 2 ms per model chunk), free communication:
/// for hand-written schedule files given without a plan. Same checks minus memory and estimate.
Result<PlanSimulation> simulate_unit_schedule(const Schedule& s, const SimOptions& o,
                                              const std::string& schedule_file);

/// Simulated step vs estimate_step: ok within `tolerance` (0.03), else the detail names the
/// term that differs most and why.
Check compare_with_estimate(const PlanSimulation& ps, const ParallelConfig& cfg, double tolerance = 0.03);

}  // namespace meshplan
