// The self-contained HTML report of plan / estimate / simulate --html (inline CSS and SVG, no script).
#pragma once
#include <string>
#include <vector>

#include "cli/regime_note.h"
#include "core/parallel_config.h"
#include "costmodel/estimate.h"

namespace meshplan::cli {

struct HtmlReportInput {
  std::string command;                  // "plan", "estimate" or "simulate" (the page's title)
  Problem problem;
  std::vector<StepEstimate> candidates;  // best first; candidates[0] is the chosen plan (at least one)
  std::vector<StepEstimate> pareto;      // plan only: memory / step-time front; empty on one-plan pages
  std::string search_summary;            // plan only: "searched N configurations, ..." ("" = none)
  std::string timeline_svg;              // simulator/timeline_text.h gantt_svg of candidates[0]
  std::string timeline_note;             // shown above the timeline (simulated step, or why none)
  ValidationAccuracy accuracy;
};

/// One HTML5 page: problem, [Pareto front + candidate table], memory breakdown against the GPU's
/// usable memory, time breakdown, timeline, validation accuracy, provenance. Sections carry ids
/// problem, pareto, candidates, memory, time, timeline, accuracy, provenance. All text escaped;
/// deterministic (no dates). Every resource is inline: no src/href to anything but "#" anchors.
std::string html_report(const HtmlReportInput& in);

/// "TP 2 · PP 2 · DP 4 · ZeRO 1 · mb 1 · selective · SP · 1f1b" (the short name of a layout).
std::string config_label(const ParallelConfig& c);

}  // namespace meshplan::cli
