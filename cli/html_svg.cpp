// Inline SVG charts of the HTML report (see html_svg.h); plain text output, fixed decimals.
#include "cli/html_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace meshplan::cli {

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  std::string s = buf;
  if (s[0] == '-' && std::strtod(s.c_str(), nullptr) == 0) s.erase(0, 1);  // no "-0.0"
  return s;
}

namespace {

// 1, 2 or 5 x 10^k: the tick step for about `ticks` intervals over [0, hi].
double nice_step(double hi, int ticks) {
  if (hi <= 0) return 1;
  const double raw = hi / ticks, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

int decimals_for(double step) { return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9)); }

std::string text_el(double x, double y, const std::string& s, const std::string& extra = "") {
  return "<text x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\"" + extra + ">" + html_escape(s) + "</text>\n";
}

std::string rect_el(double x, double y, double w, double h, const std::string& fill, const std::string& title = "") {
  std::string r = "<rect x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" width=\"" + fixed(std::max(w, 0.0), 1) +
                  "\" height=\"" + fixed(std::max(h, 0.0), 1) + "\" fill=\"" + fill + "\"";
  if (title.empty()) return r + "/>\n";
  return r + "><title>" + html_escape(title) + "</title></rect>\n";
}

std::string line_el(double x1, double y1, double x2, double y2, const std::string& stroke, const std::string& extra = "") {
  return "<line x1=\"" + fixed(x1, 1) + "\" y1=\"" + fixed(y1, 1) + "\" x2=\"" + fixed(x2, 1) + "\" y2=\"" +
         fixed(y2, 1) + "\" stroke=\"" + stroke + "\"" + extra + "/>\n";
}

std::string svg_open(int w, int h, const std::string& label) {
  return "<svg class=\"chart\" role=\"img\" aria-label=\"" + html_escape(label) + "\" width=\"" + std::to_string(w) +
         "\" height=\"" + std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
         "\" font-family=\"sans-serif\" font-size=\"11\">\n";
}

}  // namespace

std::string scatter_svg(const std::vector<ScatterPoint>& points, double capacity_x, const std::string& x_label,
                        const std::string& y_label) {
  const int W = 720, H = 360, L = 64, R = 20, T = 30, B = 48;
  const double pw = W - L - R, ph = H - T - B;
  double xmax = capacity_x, ymax = 0;
  for (const ScatterPoint& p : points) xmax = std::max(xmax, p.x), ymax = std::max(ymax, p.y);
  const double xs = nice_step(xmax * 1.05, 6), ys = nice_step(ymax * 1.1, 5);
  const double xhi = std::ceil(xmax * 1.05 / xs) * xs, yhi = std::max(ys, std::ceil(ymax * 1.1 / ys) * ys);
  auto X = [&](double v) { return L + pw * v / xhi; };
  auto Y = [&](double v) { return T + ph - ph * v / yhi; };
  std::string s = svg_open(W, H, "Pareto front: " + y_label + " vs " + x_label);
  for (double v = 0; v <= xhi + xs / 2; v += xs) {
    s += line_el(X(v), T, X(v), T + ph, "#e5e5e5");
    s += text_el(X(v), T + ph + 16, fixed(v, decimals_for(xs)), " text-anchor=\"middle\"");
  }
  for (double v = 0; v <= yhi + ys / 2; v += ys) {
    s += line_el(L, Y(v), L + pw, Y(v), "#e5e5e5");
    s += text_el(L - 6, Y(v) + 4, fixed(v, decimals_for(ys)), " text-anchor=\"end\"");
  }
  s += line_el(L, T + ph, L + pw, T + ph, "#333") + line_el(L, T, L, T + ph, "#333");
  s += text_el(L + pw / 2, H - 10, x_label, " text-anchor=\"middle\"");
  s += text_el(14, T + ph / 2, y_label, " text-anchor=\"middle\" transform=\"rotate(-90 14 " + fixed(T + ph / 2, 1) + ")\"");
  if (capacity_x > 0) {
    s += line_el(X(capacity_x), T, X(capacity_x), T + ph, "#c0392b", " stroke-dasharray=\"6 4\" stroke-width=\"1.5\"");
    s += text_el(X(capacity_x) - 4, T + 12, "GPU capacity", " text-anchor=\"end\" fill=\"#c0392b\"");
  }
  std::string path;  // Pareto front as a staircase, memory ascending
  std::vector<const ScatterPoint*> front;
  for (const ScatterPoint& p : points)
    if (p.group == 0) front.push_back(&p);
  std::sort(front.begin(), front.end(), [](auto* a, auto* b) { return a->x < b->x || (a->x == b->x && a->y < b->y); });
  for (size_t i = 0; i < front.size(); ++i) {
    if (i > 0) path += " L" + fixed(X(front[i]->x), 1) + " " + fixed(Y(front[i - 1]->y), 1);
    path += (i == 0 ? "M" : " L") + fixed(X(front[i]->x), 1) + " " + fixed(Y(front[i]->y), 1);
  }
  if (!path.empty()) s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#2e86c1\" stroke-width=\"1.2\"/>\n";
  static const char* fills[] = {"#2e86c1", "#f39c12", "#27ae60"};
  static const int radius[] = {4, 5, 7};
  for (int g = 0; g < 3; ++g)
    for (const ScatterPoint& p : points) {
      if (p.group != g) continue;
      s += "<circle cx=\"" + fixed(X(p.x), 1) + "\" cy=\"" + fixed(Y(p.y), 1) + "\" r=\"" + std::to_string(radius[g]) +
           "\" fill=\"" + fills[g] + "\" fill-opacity=\"0.85\" stroke=\"#fff\"><title>" + html_escape(p.label) +
           "</title></circle>\n";
    }
  static const char* names[] = {"Pareto front", "top candidates", "chosen plan"};
  for (int g = 0; g < 3; ++g) {
    const double lx = L + pw - 130, ly = T + 26 + 16 * g;
    s += "<circle cx=\"" + fixed(lx, 1) + "\" cy=\"" + fixed(ly - 4, 1) + "\" r=\"5\" fill=\"" + fills[g] + "\"/>\n";
    s += text_el(lx + 10, ly, names[g]);
  }
  return s + "</svg>\n";
}

std::string stacked_bars_svg(const std::vector<StackedBar>& bars, const std::vector<std::string>& part_names,
                             const std::vector<std::string>& colours, const std::string& unit, double capacity,
                             const std::string& capacity_label) {
  const int L = 64, T = 30, B = 34, barw = 56, gap = 36;
  const int W = std::max(520, L + static_cast<int>(bars.size()) * (barw + gap) + 170), H = 340;
  const double ph = H - T - B;
  double ymax = capacity;
  for (const StackedBar& b : bars) {
    double sum = 0;
    for (double v : b.parts) sum += v;
    ymax = std::max(ymax, sum);
  }
  const double ys = nice_step(ymax * 1.08, 5), yhi = std::max(ys, std::ceil(ymax * 1.08 / ys) * ys);
  auto Y = [&](double v) { return T + ph - ph * v / yhi; };
  const double right = L + bars.size() * (barw + gap) + gap / 2.0;
  std::string s = svg_open(W, H, "stacked bars in " + unit);
  for (double v = 0; v <= yhi + ys / 2; v += ys) {
    s += line_el(L, Y(v), right, Y(v), "#e5e5e5");
    s += text_el(L - 6, Y(v) + 4, fixed(v, decimals_for(ys)), " text-anchor=\"end\"");
  }
  s += line_el(L, T + ph, right, T + ph, "#333") + line_el(L, T, L, T + ph, "#333");
  s += text_el(14, T + ph / 2, unit, " text-anchor=\"middle\" transform=\"rotate(-90 14 " + fixed(T + ph / 2, 1) + ")\"");
  for (size_t i = 0; i < bars.size(); ++i) {
    const double x = L + gap / 2.0 + i * (barw + gap);
    double base = 0;
    for (size_t k = 0; k < bars[i].parts.size() && k < part_names.size(); ++k) {
      const double v = bars[i].parts[k];
      s += rect_el(x, Y(base + v), barw, Y(base) - Y(base + v), colours[k % colours.size()],
                   bars[i].label + ": " + part_names[k] + " " + fixed(v, 2) + " " + unit);
      base += v;
    }
    s += text_el(x + barw / 2.0, Y(base) - 4, fixed(base, 1), " text-anchor=\"middle\"");
    s += text_el(x + barw / 2.0, T + ph + 16, bars[i].label, " text-anchor=\"middle\"");
  }
  if (capacity > 0) {
    s += line_el(L, Y(capacity), right, Y(capacity), "#c0392b", " stroke-dasharray=\"6 4\" stroke-width=\"1.5\"");
    s += text_el(right - 2, Y(capacity) - 5, capacity_label, " text-anchor=\"end\" fill=\"#c0392b\"");
  }
  for (size_t k = 0; k < part_names.size(); ++k) {
    const double lx = right + 20, ly = T + 10 + 20.0 * k;
    s += rect_el(lx, ly - 10, 12, 12, colours[k % colours.size()]);
    s += text_el(lx + 18, ly, part_names[k]);
  }
  return s + "</svg>\n";
}

std::string breakdown_bar_svg(const std::vector<double>& parts, const std::vector<std::string>& part_names,
                              const std::vector<std::string>& colours) {
  const int W = 720, L = 10, T = 10, barh = 40, pw = W - 2 * L;
  const int H = T + barh + 24 + 20 * static_cast<int>((part_names.size() + 1) / 2) + 10;
  double total = 0;
  for (double v : parts) total += v;
  std::string s = svg_open(W, H, "step time breakdown");
  double x = L;
  for (size_t k = 0; k < parts.size(); ++k) {
    const double w = total > 0 ? pw * parts[k] / total : 0;
    const std::string share = fixed(total > 0 ? 100 * parts[k] / total : 0, 1) + "%";
    s += rect_el(x, T, w, barh, colours[k % colours.size()], part_names[k] + ": " + fixed(1e3 * parts[k], 2) + " ms (" + share + ")");
    if (w > 44) s += text_el(x + w / 2, T + barh / 2.0 + 4, share, " text-anchor=\"middle\" fill=\"white\"");
    x += w;
  }
  for (size_t k = 0; k < part_names.size(); ++k) {
    const double lx = L + (k % 2) * (pw / 2.0), ly = T + barh + 26 + 20.0 * (k / 2);
    s += rect_el(lx, ly - 10, 12, 12, colours[k % colours.size()]);
    const double v = k < parts.size() ? parts[k] : 0;
    s += text_el(lx + 18, ly, part_names[k] + ": " + fixed(1e3 * v, 2) + " ms (" +
                              fixed(total > 0 ? 100 * v / total : 0, 1) + "%)");
  }
  return s + "</svg>\n";
}

}  // namespace meshplan::cli
