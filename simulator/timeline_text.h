// Timelines as text, from a SimResult's spans: Chrome/Perfetto trace-event JSON, our own Gantt SVG,
// and the schedule's dependency graph as DOT. Pure functions returning strings (the CLI writes files).
#pragma once
#include <string>

#include "planner/schedule.h"
#include "simulator/sim_types.h"

namespace meshplan {

/// Trace-event JSON ({"traceEvents": [...]}): one process ("pid") per simulated GPU named
/// "rank r" (or "replica q rank r"), one thread ("tid") per stream (0 compute, 1 p2p, 2 dp) with
/// metadata events naming both, and one "X" (complete) event per span with "ts"/"dur" in
/// microseconds (ns precision), plus a counter track ("C") per GPU with its stashed activation GB
/// over time. `title` goes to "otherData". Deterministic.
std::string trace_json(const SimResult& r, const std::string& title);

/// Gantt chart: one row per simulated GPU (compute bar, and a thin communication bar under it),
/// colours per action kind, micro-batch numbers on bars wide enough to hold them, a legend and a
/// time axis in ms. `width_px` is the drawing width of the time axis. Above 6,000 spans in view it
/// draws one rect per pixel column and kind (aggregated), so any plan's chart stays small.
/// `view` picks a time window and a range of rows (lanes); the default is the whole step.
struct GanttView {
  Nanoseconds from_ns = 0;   // window start
  Nanoseconds to_ns = -1;    // window end; -1 = end of the step
  int first_lane = 0;        // rows first_lane..last_lane (lane = replica * pp + stage)
  int last_lane = -1;        // -1 = the last lane
};
std::string gantt_svg(const SimResult& r, const std::string& title, int width_px = 1200,
                      const GanttView& view = {});

/// Dependency graph of a schedule with send/recv: one cluster per rank with its actions in order
/// (grey edges), plus cross-rank edges from each send to its receive (red). Plain DOT text.
std::string schedule_dot(const Schedule& s);

/// Number of nodes schedule_dot would draw (for the CLI's "too big to render" limit).
int schedule_dot_nodes(const Schedule& s);

}  // namespace meshplan
