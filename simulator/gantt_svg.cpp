// gantt_svg: our own SVG timeline (ranks as rows, colours per action kind, micro-batch numbers,
// legend, time axis). Plain text; numbers printed with fixed precision so output is deterministic.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "simulator/analysis.h"
#include "simulator/timeline_text.h"

namespace meshplan {

namespace {

constexpr double kLeft = 120, kTop = 48, kBar = 20, kComm = 7, kPitch = 38;

struct Style {
  const char* label;
  const char* fill;
  const char* fill_odd;  // odd chunks of an interleaved schedule
};

Style style_of(const Span& s) {
  if (s.stream == Stream::P2p) return {"send (p2p)", "#b07aa1", "#b07aa1"};
  if (s.stream == Stream::Dp)
    return s.kind == ActionKind::ReduceGrads ? Style{"DP reduce", "#f28e2b", "#f28e2b"}
                                             : Style{"ZeRO all-gather", "#edc948", "#edc948"};
  switch (s.kind) {
    case ActionKind::Forward: return {"forward F", "#4e79a7", "#a0cbe8"};
    case ActionKind::Backward: return {"backward B", "#59a14f", "#8cd17d"};
    case ActionKind::BackwardWeight: return {"weight grad W", "#499894", "#86bcb6"};
    default: return {"optimizer O", "#9c755f", "#9c755f"};
  }
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

// Tick spacing 1, 2 or 5 x 10^k ms giving about 10 ticks over the step.
double tick_ms(double step_ms) {
  const double raw = step_ms / 10.0;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * p) return m * p;
  return 10.0 * p;
}

struct Canvas {
  std::string out;
  double width = 0;
  double scale = 0;  // px per ns
  Nanoseconds t0 = 0, t1 = 0;  // time window drawn
  int first_lane = 0;          // lane drawn in the first row
  double x(Nanoseconds t) const {
    return kLeft + static_cast<double>(std::min(std::max(t, t0), t1) - t0) * scale;
  }
  bool visible(const Span& s, int lanes) const {
    return s.end_ns > t0 && s.start_ns < t1 && s.lane >= first_lane && s.lane < first_lane + lanes;
  }
  void rect(double x0, double y, double w, double h, const char* fill) {
    out += "<rect x=\"" + num(x0) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.3)) + "\" height=\"" +
           num(h) + "\" fill=\"" + fill + "\"/>\n";
  }
  void text(double x0, double y, const std::string& t, const char* extra = "") {
    out += "<text x=\"" + num(x0) + "\" y=\"" + num(y) + "\"" + extra + ">" + escape(t) + "</text>\n";
  }
};

void draw_axis(Canvas& c, double y) {
  const double step_ms = static_cast<double>(c.t1 - c.t0) / 1e6, from_ms = static_cast<double>(c.t0) / 1e6;
  const double t = tick_ms(step_ms > 0 ? step_ms : 1.0);
  c.out += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(y) + "\" x2=\"" + num(kLeft + c.width) + "\" y2=\"" +
           num(y) + "\" stroke=\"#333\"/>\n";
  for (int i = 0; i * t <= step_ms * 1.0000001; ++i) {
    const double px = kLeft + i * t * 1e6 * c.scale;
    c.out += "<line x1=\"" + num(px) + "\" y1=\"" + num(y) + "\" x2=\"" + num(px) + "\" y2=\"" + num(y + 5) +
             "\" stroke=\"#333\"/>\n";
    char label[32];
    std::snprintf(label, sizeof label, "%g", from_ms + i * t);
    c.text(px, y + 17, label, " text-anchor=\"middle\"");
  }
  c.text(kLeft + c.width / 2, y + 33, "time (ms)", " text-anchor=\"middle\"");
}

void draw_legend(Canvas& c, const SimResult& r, double y) {
  Span probe;
  const std::pair<ActionKind, Stream> items[] = {
      {ActionKind::Forward, Stream::Compute},      {ActionKind::Backward, Stream::Compute},
      {ActionKind::BackwardWeight, Stream::Compute}, {ActionKind::OptimizerStep, Stream::Compute},
      {ActionKind::SendForward, Stream::P2p},      {ActionKind::ReduceGrads, Stream::Dp},
      {ActionKind::Forward, Stream::Dp}};
  double x = kLeft;
  for (const auto& [k, st] : items) {
    probe.kind = k;
    probe.stream = st;
    const Style s = style_of(probe);
    c.rect(x, y, 14, 14, s.fill);
    c.text(x + 19, y + 11, s.label);
    x += 30 + 7.0 * std::string(s.label).size();
  }
  if (r.virtual_stages > 1) c.text(x, y + 11, "(light: odd chunks)");
}

// Beyond this many spans the chart is drawn aggregated: at 1T scale (P=64, 512 micro-batches) one
// rect per span is a 9.5 MB barcode whose actions are narrower than a pixel anyway.
constexpr size_t kMaxDetailSpans = 6000;
constexpr const char* kMixedCompute = "#7d8f86";  // a pixel column holding several compute kinds
constexpr const char* kMixedComm = "#c7a6c4";

struct Run {
  int start, end;    // pixel columns [start, end)
  const char* fill;  // nullptr = idle
};

void add_column(std::vector<Run>& runs, const char* fill) {
  const int col = runs.empty() ? 0 : runs.back().end;
  if (!runs.empty() && runs.back().fill == fill) ++runs.back().end;
  else runs.push_back(Run{col, col + 1, fill});
}

// The fill covering >= 80 % of a column's busy time, `mixed` when none does, nullptr when the column
// is less than 5 % busy.
const char* dominant_fill(const std::vector<std::pair<const char*, double>>& cell, const char* mixed) {
  double total = 0, best = 0;
  const char* fill = nullptr;
  for (const auto& p : cell) {
    total += p.second;
    if (p.second > best) best = p.second, fill = p.first;
  }
  if (total < 0.05) return nullptr;
  return best < 0.8 * total ? mixed : fill;
}

// Aggregated view: per lane and row (compute / communication), each pixel column gets the fill
// that covers >= 80 % of its busy time, a "mixed" fill when none does, nothing when it is less than
// 5 % busy; equal neighbouring columns become one rect. Output size ~ lanes x runs, not spans.
void draw_aggregated(Canvas& c, const SimResult& r, int rows) {
  const int cols = static_cast<int>(c.width);
  // busy[(lane*2+row)*cols+col] : fill -> px covered (fills are string literals: compare pointers).
  std::vector<std::vector<std::pair<const char*, double>>> busy(static_cast<size_t>(rows) * 2 * cols);
  for (const Span& s : r.spans) {
    if (!c.visible(s, rows)) continue;
    const Style st = style_of(s);
    const char* fill = s.chunk % 2 ? st.fill_odd : st.fill;
    const int row = s.stream == Stream::Compute ? 0 : 1;
    const double x0 = c.x(s.start_ns) - kLeft, x1 = c.x(s.end_ns) - kLeft;
    for (int col = std::max(0, static_cast<int>(x0)); col < cols && col < x1; ++col) {
      const double cover = std::min<double>(x1, col + 1) - std::max<double>(x0, col);
      if (cover <= 0) continue;
      auto& cell = busy[(static_cast<size_t>(s.lane - c.first_lane) * 2 + row) * cols + col];
      auto it = std::find_if(cell.begin(), cell.end(), [&](const auto& p) { return p.first == fill; });
      if (it == cell.end()) cell.emplace_back(fill, cover);
      else it->second += cover;
    }
  }
  for (int lane = 0; lane < rows; ++lane)
    for (int row = 0; row < 2; ++row) {
      const char* mixed = row == 0 ? kMixedCompute : kMixedComm;
      std::vector<Run> runs;
      for (int col = 0; col < cols; ++col)
        add_column(runs, dominant_fill(busy[(static_cast<size_t>(lane) * 2 + row) * cols + col], mixed));
      // Runs narrower than 3 px between busy neighbours (F/B alternating at sub-pixel scale) are
      // "mixed" too: one long grey run instead of a barcode.
      std::vector<Run> merged;
      for (size_t i = 0; i < runs.size(); ++i) {
        Run u = runs[i];
        const bool busy_next = (i > 0 && runs[i - 1].fill) || (i + 1 < runs.size() && runs[i + 1].fill);
        if (u.fill && u.fill != mixed && u.end - u.start < 3 && busy_next) u.fill = mixed;
        if (!merged.empty() && merged.back().fill == u.fill) merged.back().end = u.end;
        else merged.push_back(u);
      }
      const double y = kTop + lane * kPitch + (row == 0 ? 0.0 : kBar + 2);
      for (const Run& u : merged)
        if (u.fill) c.rect(kLeft + u.start, y, u.end - u.start, row == 0 ? kBar : kComm, u.fill);
    }
}

}  // namespace

std::string gantt_svg(const SimResult& r, const std::string& title, int width_px, const GanttView& view) {
  Canvas c;
  c.width = width_px;
  const int lanes = static_cast<int>(r.lanes.size());
  c.first_lane = std::min(std::max(view.first_lane, 0), std::max(lanes - 1, 0));
  const int last = view.last_lane < 0 ? lanes - 1 : std::min(view.last_lane, lanes - 1);
  const int rows = std::max(0, last - c.first_lane + 1);
  c.t0 = std::min(std::max<Nanoseconds>(view.from_ns, 0), r.step_ns);
  c.t1 = view.to_ns < 0 ? r.step_ns : std::min(view.to_ns, r.step_ns);
  if (c.t1 <= c.t0) c.t1 = c.t0 + 1;
  c.scale = c.width / static_cast<double>(c.t1 - c.t0);
  const double axis_y = kTop + rows * kPitch + 4;
  const double height = axis_y + 84;
  c.out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
          num(kLeft + c.width + 30) + "\" height=\"" + num(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  c.out += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  c.text(kLeft, 24, title, " font-size=\"15\"");
  for (int lane = 0; lane < rows; ++lane) {
    const double y = kTop + lane * kPitch;
    c.text(8, y + 14, lane_name(r, c.first_lane + lane));
    c.rect(kLeft, y, c.width, kBar, "#f2f2f2");
  }
  size_t in_view = 0;
  for (const Span& s : r.spans) in_view += c.visible(s, rows);
  const bool aggregated = in_view > kMaxDetailSpans;
  if (aggregated) {
    draw_aggregated(c, r, rows);
    c.text(kLeft + c.width, 40,
           "aggregated: " + std::to_string(in_view) + " actions; grey = several kinds in one pixel (--trace has each)",
           " text-anchor=\"end\" fill=\"#555\"");
  }
  for (const Span& s : r.spans) {
    if (aggregated) break;
    if (!c.visible(s, rows)) continue;
    const Style st = style_of(s);
    const double y = kTop + (s.lane - c.first_lane) * kPitch + (s.stream == Stream::Compute ? 0.0 : kBar + 2);
    const double x0 = c.x(s.start_ns), w = c.x(s.end_ns) - x0;
    c.rect(x0, y, w, s.stream == Stream::Compute ? kBar : kComm, s.chunk % 2 ? st.fill_odd : st.fill);
    if (s.stream != Stream::Compute || s.micro_batch < 0 || s.piece != 0) continue;
    const std::string label = std::to_string(s.micro_batch);
    if (w >= 6.5 * label.size() + 2)
      c.text(x0 + w / 2, y + 14, label, " text-anchor=\"middle\" fill=\"white\" font-size=\"10\"");
  }
  draw_axis(c, axis_y);
  draw_legend(c, r, axis_y + 46);
  if (aggregated) {
    c.rect(kLeft, axis_y + 64, 14, 14, kMixedCompute);
    c.text(kLeft + 19, axis_y + 75, "several compute kinds in one pixel column");
    c.rect(kLeft + 300, axis_y + 64, 14, 14, kMixedComm);
    c.text(kLeft + 319, axis_y + 75, "several transfer kinds");
  }
  c.out += "</svg>\n";
  return c.out;
}

}  // namespace meshplan
