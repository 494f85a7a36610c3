// The `meshplan simulate` report: terminal summary and meshplan.simulate/1 JSON (DESIGN.md keys).
#pragma once
#include <optional>
#include <string>

#include "core/parallel_config.h"
#include "simulator/goodput.h"
#include "simulator/plan_sim.h"

namespace meshplan::cli {

/// What the report describes besides the simulation itself.
struct SimulateContext {
  const Problem* problem = nullptr;        // null for a schedule file simulated with unit costs
  const ParallelConfig* config = nullptr;  // null likewise
  bool ideal_network = false;
  std::string schedule_file;               // empty when the schedule was generated
  std::optional<GoodputInput> goodput_in;
  std::optional<GoodputReport> goodput;
};

/// {"schema": "meshplan.simulate/1", "step_s", "bubble_fraction", "events", "checks": [...],
///  "stages": [{"stage", "peak_activation_bytes", ...}], + "config", "schedule", "critical",
///  "estimate", "goodput", "provenance"}. Deterministic (no wall-clock figures).
std::string simulate_json(const PlanSimulation& ps, const SimulateContext& ctx);
std::string simulate_table(const PlanSimulation& ps, const SimulateContext& ctx);

}  // namespace meshplan::cli
