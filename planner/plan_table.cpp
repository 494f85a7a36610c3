// Text tables of a search result.
#include "planner/plan_table.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "core/human_format.h"
#include "core/framework.h"
#include "costmodel/fp8_params.h"

namespace meshplan {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pad_left(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

// A table: rows of cells, columns right-aligned except those marked left.
struct Table {
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> left;
  std::string render() const {
    std::vector<size_t> w;
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size(); ++i) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], r[i].size());
      }
    std::ostringstream o;
    for (const auto& r : rows) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i) {
        const bool l = i < left.size() && left[i];
        line += (i ? "  " : "") + (l ? pad_right(r[i], w[i]) : pad_left(r[i], w[i]));
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      o << line << "\n";
    }
    return o.str();
  }
};

std::string percent(double f) { return fmt("%.1f%%", 100.0 * f); }

// MoE models: "ep" and "etp" columns after "dp" (row 0 is the header, row i+1 candidate i).
void add_expert_columns(const SearchResult& r, std::vector<std::vector<std::string>>& rows, std::vector<bool>& left) {
  const size_t at = 4;
  rows[0].insert(rows[0].begin() + at, {"ep", "etp"});
  for (size_t i = 0; i < r.top.size(); ++i)
    rows[i + 1].insert(rows[i + 1].begin() + at,
                       {std::to_string(r.top[i].config.ep), std::to_string(r.top[i].config.etp)});
  left.insert(left.begin() + at, {false, false});
}

// A cp column after dp (and before ep, etp) when any listed plan splits its sequences: without it the
// degrees shown would not multiply to the GPU count.
void add_cp_column(const SearchResult& r, std::vector<std::vector<std::string>>& rows, std::vector<bool>& left) {
  bool any = false;
  for (const StepEstimate& e : r.top) any = any || e.config.cp > 1;
  if (!any) return;
  const size_t at = 4;
  rows[0].insert(rows[0].begin() + at, "cp");
  for (size_t i = 0; i < r.top.size(); ++i)
    rows[i + 1].insert(rows[i + 1].begin() + at, std::to_string(r.top[i].config.cp));
  left.insert(left.begin() + at, false);
}

std::string header(const Problem& p, const SearchOptions& opt, const SearchResult& r) {
  std::ostringstream o;
  const ParamBytes pb = param_bytes(p.job);
  o << "meshplan plan: " << p.model.name << " ("
    << human_count(p.model.num_parameters(), "parameters") << active_parameters_text(p.model) << ") on " << p.job.gpus << " x "
    << p.hardware.name << " (" << p.hardware.gpus_per_node << " per node), global batch "
    << p.job.global_batch << " x " << p.job.seq_len << " tokens, " << p.job.dtype << ", "
    << fmt("%g", pb.weights + pb.gradients + pb.optimizer) << " B/param\n";
  o << "objective: " << to_string(opt.objective) << "; framework " << to_string(p.job.framework)
    << " (" << framework_spec(p.job.framework).runs_with << ")"
    << (p.job.knobs.moe_a2a_overlap ? ", EP all-to-all overlapped (--moe-a2a-overlap)" : "")
    << (p.job.knobs.activation_offload_layers > 0
            ? ", activations of " + std::to_string(p.job.knobs.activation_offload_layers) + " layers offloaded to host"
            : "")
    << (fp8_primary_weights(p) ? ", FP8 primary weights (--fp8-param-gather)" : "")
    << (p.job.knobs.tp_comm_overlap ? ", TP communication under the GEMMs where TP > 1 (--tp-comm-overlap)" : "")
    << (p.job.knobs.param_gather_overlap ? ", weight all-gather under the next forward (--overlap-param-gather)" : "")
    << "; usable memory "
    << gb_text(p.hardware.usable_memory_bytes()) << " GB per GPU\n";
  o << "searched " << group_thousands(r.space) << " configurations: " << group_thousands(r.fitting())
    << " fit, " << group_thousands(r.rejected.total()) << " rejected";
  std::string reasons;
  for (int i = 0; i < kNumReasons; ++i)
    if (r.rejected.n[i] > 0)
      reasons += (reasons.empty() ? "" : ", ") + std::string(reason_name(static_cast<Reason>(i))) +
                 " " + group_thousands(r.rejected.n[i]);
  if (!reasons.empty()) o << " (" << reasons << ")";
  o << "\n";
  return o.str();
}

std::string ranked_table(const Problem& p, const SearchOptions& opt, const SearchResult& r) {
  Table t;
  const bool cost = opt.objective == Objective::Cost;
  t.rows.push_back({"#", "tp", "pp", "dp", "zero", "mb", "M", "schedule", "recompute", "sp", "overlap",
                    "peak GB", "step s", "tokens/s", "MFU", "bottleneck"});
  if (cost) t.rows.back().push_back("$/Mtok");
  t.left = {false, false, false, false, false, false, false, true, true, true, true,
            false, false, false, false, true};
  for (size_t i = 0; i < r.top.size(); ++i) {
    const StepEstimate& e = r.top[i];
    const ParallelConfig& c = e.config;
    t.rows.push_back({std::to_string(i + 1), std::to_string(c.tp), std::to_string(c.pp),
                      std::to_string(c.dp), zero_text(c),
                      std::to_string(c.micro_batch_size), std::to_string(c.num_micro_batches),
                      schedule_text(c), to_string(c.recompute), c.sequence_parallel ? "on" : "off",
                      c.dp_overlap ? "on" : "off", gb_text(e.memory.peak_bytes),
                      seconds_text(e.time.step_s),
                      group_thousands(static_cast<int64_t>(std::llround(e.throughput.tokens_per_s))),
                      percent(e.throughput.mfu), to_string(e.bottleneck)});
    if (cost) t.rows.back().push_back(fmt("%.4f", objective_value(p, opt.objective, opt.dollars_per_gpu_hour, e)));
  }
  if (p.model.moe.enabled()) add_expert_columns(r, t.rows, t.left);  // ep, etp after dp
  add_cp_column(r, t.rows, t.left);                                  // then cp between dp and ep
  return t.render();
}

std::string breakdown_table(const SearchResult& r) {
  Table t;
  t.rows.push_back({"#", "weights", "grads", "optim", "activ", "other", "|", "compute", "tp_comm",
                    "pp_bubble", "pp_comm", "dp_comm", "optimizer"});
  for (size_t i = 0; i < r.top.size(); ++i) {
    const MemoryBreakdown& m = r.top[i].memory;
    const TimeBreakdown& s = r.top[i].time;
    t.rows.push_back({std::to_string(i + 1), gb_text(m.weights_bytes), gb_text(m.gradients_bytes),
                      gb_text(m.optimizer_bytes), gb_text(m.activations_bytes), gb_text(m.other_bytes),
                      "|", seconds_text(s.compute_s), seconds_text(s.tp_comm_s),
                      seconds_text(s.pp_bubble_s), seconds_text(s.pp_comm_s),
                      seconds_text(s.dp_comm_s), seconds_text(s.optimizer_s)});
  }
  return "memory per GPU in GB (worst stage) | exposed time per step in s\n" + t.render();
}

}  // namespace

std::string layers_text(const std::vector<int>& chunks) {
  std::string out;
  for (size_t i = 0; i < chunks.size();) {
    size_t j = i;
    while (j < chunks.size() && chunks[j] == chunks[i]) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(chunks[i]) + (j - i > 1 ? "x" + std::to_string(j - i) : "");
    i = j;
  }
  return out;
}

std::string schedule_text(const ParallelConfig& c) {
  if (c.pp == 1) return "-";
  const std::string split = c.layers_per_stage.empty() ? "" : " [" + layers_text(c.layers_per_stage) + "]";
  if (c.schedule == ScheduleKind::Interleaved)
    return "interleaved v=" + std::to_string(c.virtual_stages) + split;
  return to_string(c.schedule) + split;
}

// ZeRO stage, and under HSDP "/" its shard group in DP ranks ("3/8": ZeRO-3 within groups of 8).
std::string zero_text(const ParallelConfig& c) {
  return std::to_string(c.zero_stage) + (c.shard_group > 0 ? "/" + std::to_string(c.shard_group) : "");
}

std::string describe_config(const ParallelConfig& c) {
  std::ostringstream o;
  o << "tp=" << c.tp << " pp=" << c.pp << " dp=" << c.dp;
  if (c.cp > 1) o << " cp=" << c.cp;
  o << " zero=" << c.zero_stage;
  if (c.shard_group > 0) o << " shard_group=" << c.shard_group;
  o << " mb=" << c.micro_batch_size << " M=" << c.num_micro_batches;
  if (c.ep > 1 || c.etp > 1) o << " ep=" << c.ep << " etp=" << c.etp;
  if (c.pp > 1) o << " " << schedule_text(c);
  o << " recompute=" << to_string(c.recompute) << " sp=" << (c.sequence_parallel ? "on" : "off")
    << " overlap=" << (c.dp_overlap ? "on" : "off");
  return o.str();
}

std::string group_thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string gb_text(double bytes) { return fmt("%.2f", bytes / 1e9); }

std::string seconds_text(double s) {
  const double a = std::fabs(s);
  if (a == 0.0) return "0";
  if (a >= 1000) return fmt("%.0f", s);
  if (a >= 100) return fmt("%.1f", s);
  if (a >= 10) return fmt("%.2f", s);
  if (a >= 1) return fmt("%.3f", s);
  return fmt("%.4f", s);
}

std::string pareto_table(const Problem& p, const SearchResult& r) {
  Table t;
  t.rows.push_back({"peak GB", "step s", "tokens/s", "MFU", "configuration"});
  t.left = {false, false, false, false, true};
  for (const StepEstimate& e : r.pareto)
    t.rows.push_back({gb_text(e.memory.peak_bytes), seconds_text(e.time.step_s),
                      group_thousands(static_cast<int64_t>(std::llround(e.throughput.tokens_per_s))),
                      percent(e.throughput.mfu), describe_config(e.config)});
  return "Pareto front, memory vs throughput (" + std::to_string(r.pareto.size()) +
         " configurations no other beats on both):\n" + t.render();
}

std::string plan_table(const Problem& p, const SearchOptions& opt, const SearchResult& r) {
  std::string out = header(p, opt, r) + "\n" + ranked_table(p, opt, r) + "\n" + breakdown_table(r);
  if (!r.pareto.empty()) out += "\n" + pareto_table(p, r);
  return out;
}

}  // namespace meshplan
