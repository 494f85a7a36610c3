// --html FILE of plan, estimate and simulate: gathers simulation and validation accuracy, writes the page.
#pragma once
#include <string>
#include <vector>

#include "core/error.h"
#include "costmodel/estimate.h"

namespace meshplan {
struct PlanSimulation;
}

namespace meshplan::cli {

/// Writes cli/html_report.h's page to `path`. `candidates[0]` is the chosen plan; `sim` is its
/// simulation when the caller has one (simulate), else it is simulated here (a schedule the
/// simulator rejects puts that one line on the page instead of a timeline). `pareto` and
/// `search_summary` only for plan. Errors: the file cannot be written.
Result<bool> write_html_report(const std::string& path, const std::string& command, const Problem& problem,
                               const std::vector<StepEstimate>& candidates, const std::vector<StepEstimate>& pareto,
                               const std::string& search_summary, const PlanSimulation* sim,
                               const std::string& profiles_dir);

}  // namespace meshplan::cli
