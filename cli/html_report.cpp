// The HTML report page (see html_report.h): sections built from the estimates, charts from html_svg.h.
#include "cli/html_report.h"

#include <algorithm>

#include "cli/html_svg.h"
#include "core/framework.h"
#include "core/framework_knobs.h"
#include "core/human_format.h"
#include "meshplan_version.h"

namespace meshplan::cli {

namespace {

constexpr double kGB = 1e9;

const std::vector<std::string> kMemoryParts = {"weights", "gradients", "optimizer", "activations", "other"};
const std::vector<std::string> kMemoryColours = {"#2e86c1", "#8e44ad", "#f39c12", "#27ae60", "#95a5a6"};
const std::vector<std::string> kTimeParts = {"compute", "exposed TP comm", "exposed PP comm",
                                             "pipeline bubble", "exposed DP comm", "optimizer"};
const std::vector<std::string> kTimeColours = {"#2e86c1", "#e67e22", "#8e44ad", "#bdc3c7", "#c0392b", "#16a085"};

const char* kStyle =
    "body{font-family:sans-serif;margin:24px auto;max-width:1200px;color:#222;background:#fff}"
    "h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}"
    "th{background:#f4f6f7}td.l,th.l{text-align:left}tr.chosen td{background:#eafaf1;font-weight:bold}"
    ".note{color:#555;font-size:13px;max-width:900px}.warn{color:#a04000;font-size:13px}"
    ".scroll{overflow-x:auto}svg.chart{display:block;margin:6px 0}";

std::string esc(const std::string& s) { return html_escape(s); }

std::string gpu_hours_per_billion_tokens(const Problem& p, const StepEstimate& e) {
  if (e.throughput.tokens_per_s <= 0) return "-";
  return fixed(static_cast<double>(p.job.gpus) * 1e9 / e.throughput.tokens_per_s / 3600.0, 1);
}

std::string row(const std::vector<std::string>& cells, const std::string& cls = "") {
  std::string r = cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">";
  for (size_t i = 0; i < cells.size(); ++i) r += (i == 1 ? "<td class=\"l\">" : "<td>") + esc(cells[i]) + "</td>";
  return r + "</tr>\n";
}

std::string problem_section(const HtmlReportInput& in) {
  const Problem& p = in.problem;
  std::string s = "<section id=\"problem\"><h2>Problem</h2>\n<table>\n";
  auto kv = [&](const std::string& k, const std::string& v) {
    s += "<tr><th class=\"l\">" + esc(k) + "</th><td class=\"l\">" + esc(v) + "</td></tr>\n";
  };
  kv("model", p.model.name);
  kv("hardware", p.hardware.name + " (" + p.hardware.gpu + ", " + fixed(p.hardware.usable_memory_bytes() / kGB, 1) +
                     " GB usable per GPU)");
  kv("GPUs", std::to_string(p.job.gpus));
  kv("global batch", std::to_string(p.job.global_batch) + " sequences of " + std::to_string(p.job.seq_len) +
                         " tokens (" + human_count(static_cast<double>(p.job.global_batch * p.job.seq_len)) +
                         " tokens per step)");
  kv("precision", p.job.dtype + ", " + to_string(p.job.convention) + " bytes per parameter convention");
  kv("framework", to_string(p.job.framework));
  kv("attention", to_string(p.job.knobs.attention));
  if (!in.search_summary.empty()) kv("search", in.search_summary);
  return s + "</table></section>\n";
}

std::string scatter_label(const StepEstimate& e, const std::string& prefix) {
  return prefix + config_label(e.config) + ": " + fixed(e.time.step_s, 3) + " s, " +
         fixed(e.memory.peak_bytes / kGB, 1) + " GB";
}

std::string pareto_section(const HtmlReportInput& in) {
  const Problem& p = in.problem;
  std::vector<ScatterPoint> pts;
  for (const StepEstimate& e : in.pareto)
    pts.push_back({e.memory.peak_bytes / kGB, e.time.step_s, scatter_label(e, "Pareto: "), 0});
  for (size_t i = in.candidates.size(); i-- > 0;) {
    const StepEstimate& e = in.candidates[i];
    pts.push_back({e.memory.peak_bytes / kGB, e.time.step_s, scatter_label(e, "#" + std::to_string(i + 1) + " "),
                   i == 0 ? 2 : 1});
  }
  std::string s = "<section id=\"pareto\"><h2>Pareto front: step time vs peak memory per GPU</h2>\n";
  s += "<p class=\"note\">Each point is a layout that fits; the front holds the layouts no other beats on both "
       "step time and memory. Hover a point for its layout.</p>\n";
  s += scatter_svg(pts, p.hardware.usable_memory_bytes() / kGB, "peak memory per GPU (GB)", "step time (s)");
  return s + "</section>\n";
}

std::string candidates_section(const HtmlReportInput& in) {
  const Problem& p = in.problem;
  std::string s = "<section id=\"candidates\"><h2>Candidates</h2>\n<table>\n<tr><th>#</th><th class=\"l\">layout</th>"
                  "<th>step time (s)</th><th>peak memory (GB)</th><th>tokens/s</th><th>MFU</th>"
                  "<th>GPU-hours per 1B tokens</th>";
  const double price = p.hardware.dollars_per_gpu_hour;
  if (price > 0) s += "<th>$ per 1B tokens</th>";
  s += "<th class=\"l\">bottleneck</th></tr>\n";
  for (size_t i = 0; i < in.candidates.size(); ++i) {
    const StepEstimate& e = in.candidates[i];
    std::vector<std::string> cells = {std::to_string(i + 1), config_label(e.config), fixed(e.time.step_s, 3),
                                      fixed(e.memory.peak_bytes / kGB, 1), human_count(e.throughput.tokens_per_s),
                                      fixed(100 * e.throughput.mfu, 1) + "%", gpu_hours_per_billion_tokens(p, e)};
    if (price > 0 && e.throughput.tokens_per_s > 0)
      cells.push_back(fixed(price * static_cast<double>(p.job.gpus) * 1e9 / e.throughput.tokens_per_s / 3600.0, 0));
    else if (price > 0)
      cells.push_back("-");
    cells.push_back(to_string(e.bottleneck));
    s += row(cells, i == 0 ? "chosen" : "");
  }
  s += "</table>\n<p class=\"note\">The job gives no token count (meshplan plan takes a batch, not a training "
       "length), so the cost of a whole run is not shown; cost is per 10<sup>9</sup> tokens: GPU-hours = GPUs "
       "&times; 10<sup>9</sup> / (tokens/s) / 3600";
  s += price > 0 ? ", dollars at the profile's " + esc(fixed(price, 2)) + " $ per GPU-hour.</p>\n" : ".</p>\n";
  return s + "</section>\n";
}

std::string memory_section(const HtmlReportInput& in) {
  const Problem& p = in.problem;
  std::vector<StackedBar> bars;
  for (size_t i = 0; i < in.candidates.size() && i < 5; ++i) {
    const MemoryBreakdown& m = in.candidates[i].memory;
    bars.push_back({in.candidates.size() == 1 ? "this plan" : "#" + std::to_string(i + 1),
                    {m.weights_bytes / kGB, m.gradients_bytes / kGB, m.optimizer_bytes / kGB,
                     m.activations_bytes / kGB, m.other_bytes / kGB}});
  }
  const double cap = p.hardware.usable_memory_bytes() / kGB;
  std::string s = "<section id=\"memory\"><h2>Memory per GPU (worst pipeline stage)</h2>\n";
  s += stacked_bars_svg(bars, kMemoryParts, kMemoryColours, "GB", cap, "usable " + fixed(cap, 1) + " GB");
  s += "<p class=\"note\">Bytes on the pipeline stage with the largest peak; the dashed line is the GPU's memory "
       "less the profile's reserve (CUDA context, fragmentation).</p>\n";
  return s + "</section>\n";
}

std::string time_section(const HtmlReportInput& in) {
  const StepEstimate& e = in.candidates.front();
  const TimeBreakdown& t = e.time;
  std::string s = "<section id=\"time\"><h2>Step time of the plan: " + esc(fixed(t.step_s, 3)) + " s</h2>\n";
  s += "<p class=\"note\">" + esc(config_label(e.config)) + ". Exposed (not overlapped) time per step, from the cost "
       "model; bottleneck: " + esc(to_string(e.bottleneck)) + ".</p>\n";
  s += breakdown_bar_svg({t.compute_s, t.tp_comm_s, t.pp_comm_s, t.pp_bubble_s, t.dp_comm_s, t.optimizer_s}, kTimeParts,
                         kTimeColours);
  return s + "</section>\n";
}

std::string timeline_section(const HtmlReportInput& in) {
  std::string s = "<section id=\"timeline\"><h2>Timeline of the plan (simulator)</h2>\n";
  if (!in.timeline_note.empty()) s += "<p class=\"note\">" + esc(in.timeline_note) + "</p>\n";
  std::string svg = in.timeline_svg;
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find('\n') + 1);  // inline SVG takes no XML declaration
  if (!svg.empty()) s += "<div class=\"scroll\">\n" + svg + "</div>\n";
  return s + "</section>\n";
}

std::string percent(double fraction) { return fixed(100 * fraction, 1) + "%"; }

std::string accuracy_section(const HtmlReportInput& in) {
  const ValidationAccuracy& a = in.accuracy;
  std::string s = "<section id=\"accuracy\"><h2>Validation accuracy that applies</h2>\n<table>\n"
                  "<tr><th class=\"l\">runs</th><th>held-out runs</th><th>mean |error| of step time</th></tr>\n";
  s += "<tr><td class=\"l\">all published held-out runs (validation/)</td><td>" + std::to_string(a.held_out_runs) +
       "</td><td>" + percent(a.held_out_mean_abs_error) + "</td></tr>\n";
  s += "<tr><td class=\"l\">this plan's regime: " + esc(a.regime) + "</td><td>" + std::to_string(a.in_regime.runs) +
       "</td><td>" + (a.in_regime.runs > 0 ? percent(a.in_regime.mean_abs_error) : std::string("no runs")) +
       "</td></tr>\n</table>\n";
  if (a.in_regime.runs > 0)
    s += "<p class=\"note\">Mean signed error in this regime: " + esc((a.in_regime.mean_error >= 0 ? "+" : "") +
                                                                      percent(a.in_regime.mean_error)) +
         " (negative: predicted too fast).</p>\n";
  if (!a.note.empty()) s += "<p class=\"warn\">" + esc(a.note) + "</p>\n";
  if (a.held_out_runs == 0) s += "<p class=\"warn\">The validation data could not be read.</p>\n";
  return s + "</section>\n";
}

std::string provenance_section() {
  return "<section id=\"provenance\"><h2>Provenance</h2>\n<p class=\"note\">meshplan " + esc(MESHPLAN_VERSION) +
         ", git " + esc(MESHPLAN_GIT_SHA) + ". Estimates from the analytical cost model (costmodel/), timeline "
         "from the event simulator (simulator/); the same inputs give this same file byte for byte.</p>\n"
         "</section>\n";
}

}  // namespace

std::string config_label(const ParallelConfig& c) {
  std::string s = "TP " + std::to_string(c.tp) + " · PP " + std::to_string(c.pp) + " · DP " + std::to_string(c.dp) +
                  " · ZeRO " + std::to_string(c.zero_stage) +
                  (c.shard_group > 0 ? " (HSDP, shard groups of " + std::to_string(c.shard_group) + ")" : "") +
                  " · mb " + std::to_string(c.micro_batch_size) + " × " +
                  std::to_string(c.num_micro_batches) + " · " + to_string(c.recompute) + " recompute";
  if (c.sequence_parallel) s += " · SP";
  if (c.pp > 1) {
    s += std::string(" · ") + to_string(c.schedule);
    if (c.virtual_stages > 1) s += " v" + std::to_string(c.virtual_stages);
  }
  return s;
}

std::string html_report(const HtmlReportInput& in) {
  const std::string title = "meshplan " + in.command + ": " + in.problem.model.name + " on " +
                            std::to_string(in.problem.job.gpus) + " × " + in.problem.hardware.name;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + esc(title) +
                  "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" + esc(title) + "</h1>\n";
  s += std::string("<p class=\"note\">") + (in.command == "plan" ? "Chosen plan: " : "Plan: ") + esc(config_label(in.candidates.front().config)) + "</p>\n";
  s += problem_section(in);
  if (in.command == "plan") s += pareto_section(in) + candidates_section(in);
  s += memory_section(in) + time_section(in) + timeline_section(in) + accuracy_section(in) + provenance_section();
  return s + "</body>\n</html>\n";
}

}  // namespace meshplan::cli
