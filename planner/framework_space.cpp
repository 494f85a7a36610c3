// The search space cut down to what the job's framework runs (core/framework.h): a framework's
// rules are domain restrictions, so fast search and plain enumerator see the same space.
#include <algorithm>
#include <string>

#include "planner/framework_space.h"

#include "core/megatron_overlap.h"

namespace meshplan {

template <class T, class Keep>
static void keep_if(std::vector<T>& v, Keep keep) {
  v.erase(std::remove_if(v.begin(), v.end(), [&](const T& x) { return !keep(x); }), v.end());
}

std::vector<int> framework_tp_domain(const FrameworkSpec& f, std::vector<int> tps) {
  if (!f.tensor_parallel) keep_if(tps, [](int tp) { return tp == 1; });
  return tps;
}

std::vector<int> framework_pp_domain(const FrameworkSpec& f, int64_t num_layers, std::vector<int> pps) {
  if (!f.pipeline_parallel) keep_if(pps, [](int pp) { return pp == 1; });
  if (f.equal_pipeline_chunks) keep_if(pps, [&](int pp) { return pp >= 1 && num_layers % pp == 0; });
  return pps;
}

void restrict_to_framework(const FrameworkSpec& f, int64_t num_layers, LayoutDims& d) {
  const int pp = d.pp, tp = d.tp;
  keep_if(d.schedules, [&](const ScheduleChoice& sc) {
    if (pp > 1 && !framework_admits_schedule(f, sc.kind, pp)) return false;
    // pp == 1 candidates are rejected by the schedule rules (interleaved) or run as 1F1B.
    const int64_t chunks = static_cast<int64_t>(pp) * std::max(1, sc.virtual_stages);
    return !(f.equal_pipeline_chunks && pp > 1 && num_layers % chunks != 0);
  });
  keep_if(d.zeros, [&](int z) { return framework_admits_zero(f, z, pp); });
  keep_if(d.recomputes, [&](Recompute r) { return framework_admits_recompute(f, r); });
  keep_if(d.sequence_parallel, [&](int sp) { return framework_admits_sp(f, sp != 0, tp); });
}

void restrict_to_megatron_overlaps(const Problem& p, LayoutDims& d) {
  // Ask the rules themselves (core/megatron_overlap.h), one dimension at a time, on a probe layout
  // that satisfies the other conditions of the same rule.
  ParallelConfig probe;
  probe.tp = d.tp;
  keep_if(d.sequence_parallel, [&](int sp) {
    probe.sequence_parallel = sp != 0;
    return tp_comm_overlap_rule(p.job, probe).empty();
  });
  probe.dp_overlap = true;
  keep_if(d.zeros, [&](int z) {
    probe.zero_stage = z;
    return param_gather_overlap_rule(p.job, probe).empty();
  });
  probe.zero_stage = 1;
  keep_if(d.dp_overlaps, [&](int ov) {
    probe.dp_overlap = ov != 0;
    return param_gather_overlap_rule(p.job, probe).empty();
  });
}

namespace {
template <class T, class Name>
std::string joined(const std::vector<T>& v, Name name) {
  std::string out;
  for (const T& x : v) out += (out.empty() ? "" : ",") + name(x);
  return out;
}
std::vector<int> all_zero_stages(const FrameworkSpec& f) {
  std::vector<int> out;
  for (int z = 0; z <= 3; ++z)
    if (framework_admits_zero(f, z, 1) || framework_admits_zero(f, z, 2)) out.push_back(z);
  return out;
}
}  // namespace

ErrorList check_space_for_framework(const FrameworkSpec& f, const SearchSpace& s) {
  ErrorList e;
  const std::string by = std::string("never runs under --framework ") + f.name;
  auto any = [](auto& v, auto pred) { return v.empty() || std::any_of(v.begin(), v.end(), pred); };
  if (!any(s.tp, [&](int tp) { return tp == 1 || f.tensor_parallel; }))
    e.push_back(make_error("command line", "--tp", joined(s.tp, [](int v) { return std::to_string(v); }), by,
                           "drop --tp or pass --tp 1"));
  if (!any(s.pp, [&](int pp) { return pp == 1 || f.pipeline_parallel; }))
    e.push_back(make_error("command line", "--pp", joined(s.pp, [](int v) { return std::to_string(v); }), by,
                           "drop --pp or pass --pp 1"));
  if (!any(s.zero, [&](int z) { return framework_admits_zero(f, z, 1) || framework_admits_zero(f, z, 2); }))
    e.push_back(make_error("command line", "--zero", joined(s.zero, [](int z) { return std::to_string(z); }), by,
                           "use --zero " + joined(all_zero_stages(f), [](int z) { return std::to_string(z); })));
  if (!any(s.schedule, [&](ScheduleKind k) {
        return std::find(f.schedules.begin(), f.schedules.end(), k) != f.schedules.end();
      }))
    e.push_back(make_error("command line", "--schedule", joined(s.schedule, [](ScheduleKind k) { return std::string(to_string(k)); }),
                           by, f.schedules.empty() ? "drop --schedule (pp = 1 only)"
                                                   : "use --schedule " + joined(f.schedules, [](ScheduleKind k) {
                                                       return std::string(to_string(k));
                                                     })));
  if (!any(s.recompute, [&](Recompute r) { return framework_admits_recompute(f, r); }))
    e.push_back(make_error("command line", "--recompute", joined(s.recompute, [](Recompute r) { return std::string(to_string(r)); }),
                           by, "use --recompute " + joined(f.recomputes, [](Recompute r) { return std::string(to_string(r)); })));
  if (!s.sequence_parallel.empty() && s.sequence_parallel.front() == 1 &&
      f.sequence_parallel == SequenceParallelRule::Never)
    e.push_back(make_error("command line", "--sequence-parallel", "", by, "drop --sequence-parallel"));
  if (!f.hybrid_sharding() && std::any_of(s.shard_group.begin(), s.shard_group.end(), [](int g) { return g > 0; }))
    e.push_back(make_error("command line", "--shard-group", joined(s.shard_group, [](int g) { return std::to_string(g); }),
                           "hybrid sharding (HSDP) " + by, "drop --shard-group, or use --framework fsdp, torchtitan or megatron"));
  return e;
}

}  // namespace meshplan
