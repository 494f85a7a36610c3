// Inline SVG charts of the HTML report: scatter (Pareto front), stacked bars (memory, time).
#pragma once
#include <string>
#include <vector>

namespace meshplan::cli {

/// Escapes & < > " ' for HTML text and attribute values.
std::string html_escape(const std::string& text);

/// A number with `digits` decimals, "C" locale, for SVG coordinates and labels (deterministic).
std::string fixed(double v, int digits);

/// One point of the scatter: x = peak memory per GPU (GB), y = step time (s).
struct ScatterPoint {
  double x = 0, y = 0;
  std::string label;    // tooltip (<title>)
  int group = 0;        // 0 Pareto front, 1 top candidate, 2 chosen plan
};

/// Scatter of step time vs memory with axes, ticks, a dashed vertical line at `capacity_x`
/// (the GPU's usable memory, GB) and a legend; Pareto points joined by a step line. 720x360 px.
std::string scatter_svg(const std::vector<ScatterPoint>& points, double capacity_x,
                        const std::string& x_label, const std::string& y_label);

/// One stacked bar: `parts` in the order of the chart's `part_names` (same units for all).
struct StackedBar {
  std::string label;
  std::vector<double> parts;
};

/// Vertical stacked bars (one per entry) with a legend, a y axis in `unit` and a dashed
/// horizontal line at `capacity` (<= 0: none) labelled `capacity_label`.
std::string stacked_bars_svg(const std::vector<StackedBar>& bars, const std::vector<std::string>& part_names,
                             const std::vector<std::string>& colours, const std::string& unit, double capacity,
                             const std::string& capacity_label);

/// One horizontal stacked bar of `parts` (seconds), each segment labelled with its share, and a
/// legend listing every part with its value in ms and its percentage.
std::string breakdown_bar_svg(const std::vector<double>& parts, const std::vector<std::string>& part_names,
                              const std::vector<std::string>& colours);

}  // namespace meshplan::cli
