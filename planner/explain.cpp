// The --explain report: rules, bounds, and winner against runner-up.
#include "planner/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "planner/plan_table.h"

namespace meshplan {

namespace {

std::string signed_seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.4f", s);
  return buf;
}

template <class T>
void differ(std::vector<std::string>& out, const char* name, const T& a, const T& b) {
  if (a == b) return;
  std::ostringstream o;
  o << name << " " << a << " vs " << b;
  out.push_back(o.str());
}

std::string rules_section(const Problem& p, const SearchResult& r) {
  std::ostringstream o;
  o << "rules (each configuration is counted once, under the first rule it breaks):\n";
  for (int i = 0; i < kNumReasons; ++i) {
    const Reason why = static_cast<Reason>(i);
    std::string text = reason_description(why);
    if (why == Reason::Memory) text += " (" + gb_text(p.hardware.usable_memory_bytes()) + " GB)";
    char line[256];
    std::snprintf(line, sizeof line, "  %-28s %12s  %s\n", reason_name(why),
                  group_thousands(r.rejected.n[i]).c_str(), text.c_str());
    o << line;
  }
  return o.str();
}

std::string work_section(const SearchResult& r, int top_k) {
  std::ostringstream o;
  o << "work: " << group_thousands(r.space) << " configurations in the space, "
    << group_thousands(r.fitting()) << " fit; " << group_thousands(r.memory_checks)
    << " memory estimates, " << group_thousands(r.evaluated) << " full step estimates; "
    << group_thousands(r.pruned) << " fitting configurations skipped because a lower bound on "
    << "their step time exceeds the #" << top_k << " candidate's\n";
  return o.str();
}

std::string versus_section(const SearchResult& r) {
  std::ostringstream o;
  if (r.top.empty()) return "no configuration fits: nothing to compare\n";
  const StepEstimate& w = r.top[0];
  if (r.top.size() < 2) return "only one configuration fits: " + describe_config(w.config) + "\n";
  const StepEstimate& u = r.top[1];
  const double rel = (u.time.step_s - w.time.step_s) / w.time.step_s;
  char pct[64];
  std::snprintf(pct, sizeof pct, "%+.2f%%", 100.0 * rel);
  o << "winner vs runner-up:\n"
    << "  #1 " << describe_config(w.config) << ": step " << seconds_text(w.time.step_s) << " s\n"
    << "  #2 " << describe_config(u.config) << ": step " << seconds_text(u.time.step_s) << " s ("
    << pct << ")\n";
  std::string fields;
  for (const std::string& d : config_differences(w.config, u.config))
    fields += (fields.empty() ? "" : ", ") + d;
  o << "  configuration differs in: " << (fields.empty() ? "nothing" : fields) << "\n";
  std::vector<TermDifference> terms = term_differences(w, u);
  o << "  time terms, runner-up minus winner (s):";
  for (const TermDifference& t : terms) o << " " << t.term << " " << signed_seconds(t.delta_s());
  o << "\n";
  const auto largest = std::max_element(terms.begin(), terms.end(), [](const auto& a, const auto& b) {
    return std::fabs(a.delta_s()) < std::fabs(b.delta_s());
  });
  if (largest->delta_s() != 0.0)
    o << "  largest difference: " << largest->term << " (" << signed_seconds(largest->delta_s())
      << " s; winner " << seconds_text(largest->winner_s) << " s, runner-up "
      << seconds_text(largest->runner_up_s) << " s)\n";
  o << "  peak memory: winner " << gb_text(w.memory.peak_bytes) << " GB, runner-up "
    << gb_text(u.memory.peak_bytes) << " GB\n";
  if (u.time.step_s == w.time.step_s)
    o << "  equal step times: the tie goes to less peak memory, then to the fixed order (fewer "
         "stages, smaller tp, lower ZeRO stage, ...)\n";
  return o.str();
}

}  // namespace

std::vector<TermDifference> term_differences(const StepEstimate& w, const StepEstimate& u) {
  const TimeBreakdown& a = w.time;
  const TimeBreakdown& b = u.time;
  return {{"compute", a.compute_s, b.compute_s},       {"tp_comm", a.tp_comm_s, b.tp_comm_s},
          {"pp_bubble", a.pp_bubble_s, b.pp_bubble_s}, {"pp_comm", a.pp_comm_s, b.pp_comm_s},
          {"dp_comm", a.dp_comm_s, b.dp_comm_s},       {"optimizer", a.optimizer_s, b.optimizer_s}};
}

std::vector<std::string> config_differences(const ParallelConfig& a, const ParallelConfig& b) {
  std::vector<std::string> out;
  differ(out, "tp", a.tp, b.tp);
  differ(out, "pp", a.pp, b.pp);
  differ(out, "dp", a.dp, b.dp);
  differ(out, "zero", a.zero_stage, b.zero_stage);
  differ(out, "shard group", a.shard_group, b.shard_group);
  differ(out, "micro-batch", a.micro_batch_size, b.micro_batch_size);
  differ(out, "micro-batches", a.num_micro_batches, b.num_micro_batches);
  differ(out, "schedule", std::string(to_string(a.schedule)), std::string(to_string(b.schedule)));
  differ(out, "virtual stages", a.virtual_stages, b.virtual_stages);
  differ(out, "recompute", std::string(to_string(a.recompute)), std::string(to_string(b.recompute)));
  differ(out, "sequence parallel", std::string(a.sequence_parallel ? "on" : "off"),
         std::string(b.sequence_parallel ? "on" : "off"));
  differ(out, "dp overlap", std::string(a.dp_overlap ? "on" : "off"),
         std::string(b.dp_overlap ? "on" : "off"));
  return out;
}

std::string explain_text(const Problem& p, const SearchOptions& opt, const SearchResult& r) {
  std::string note;
  if (opt.objective != Objective::StepTime)
    note = std::string("objective ") + to_string(opt.objective) +
           " is a strictly monotone function of the step time for this GPU count and batch, so "
           "the ranking is by step time\n";
  return "explain:\n" + rules_section(p, r) + work_section(r, opt.top_k) + note + versus_section(r);
}

}  // namespace meshplan
