// Diagnosis of problems with no fitting configuration, in the order a user can act on them.
#include "planner/diagnose.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/framework.h"

namespace meshplan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

bool is_prime(int64_t n) {
  if (n < 2) return false;
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

// Fully sharded configuration on tp*pp*dp GPUs with one micro-batch of one sequence per DP rank.
bool fits_fully_sharded(const Problem& base, int tp, int pp, int64_t dp) {
  Problem p = base;
  p.job.gpus = static_cast<int64_t>(tp) * pp * dp;
  p.job.global_batch = dp;
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  c.dp = static_cast<int>(dp);
  c.zero_stage = 3;
  c.micro_batch_size = 1;
  c.num_micro_batches = 1;
  c.recompute = Recompute::Full;
  c.sequence_parallel = tp > 1;
  c.schedule = ScheduleKind::OneFOneB;
  return estimate_memory(p, c).peak_bytes <= p.hardware.usable_memory_bytes();
}

// Smallest dp that fits (memory falls as 1/dp), 0 if none up to 2^30.
int64_t min_dp(const Problem& p, int tp, int pp) {
  int64_t hi = 1;
  while (!fits_fully_sharded(p, tp, pp, hi)) {
    if (hi >= (int64_t{1} << 30)) return 0;
    hi *= 2;
  }
  int64_t lo = hi / 2;  // does not fit (or 0)
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits_fully_sharded(p, tp, pp, mid) ? hi : lo) = mid;
  }
  return hi;
}

Error make(const std::string& field, const std::string& value, const std::string& message,
           const std::string& hint) {
  return make_error("command line", field, value, message, hint);
}

// Shape-valid layouts (tp, pp) and the smallest DP among them.
struct LayoutSummary {
  int64_t valid = 0;
  int64_t min_dp = 0;
  bool any_batch_ok = false;  // some (layout, micro-batch) passes the batch rule
  bool any_dp_divides = false;  // some layout's dp divides the global batch
};

LayoutSummary summarize_layouts(const Problem& p, const SearchSpace& s) {
  LayoutSummary out;
  for (int tp : tp_domain(p, s))
    for (int pp : pp_domain(p, s, tp)) {
      if (check_layout(p, tp, pp) != Reason::None) continue;
      const LayoutDims d = layout_dims(p, s, tp, pp);
      ++out.valid;
      out.min_dp = out.min_dp == 0 ? d.dp : std::min(out.min_dp, d.dp);
      if (p.job.global_batch % d.dp == 0) out.any_dp_divides = true;
      for (int64_t mb : d.micro_batches)
        if (p.job.global_batch % (d.dp * mb) == 0) out.any_batch_ok = true;
    }
  return out;
}

Reason largest_layout_reason(const RejectCounts& r) {
  Reason best = Reason::GpusDivisible;
  for (Reason x : {Reason::GpusDivisible, Reason::TpDividesHeads, Reason::TpExceedsNode,
                   Reason::PpExceedsLayers})
    if (r[x] > r[best]) best = x;
  return best;
}

Error layout_error(const Problem& p, const SearchOptions& opt, const SearchResult& r) {
  const Reason why = largest_layout_reason(r.rejected);
  const std::string tps = opt.space.tp.empty() ? "any" : str(opt.space.tp.front());
  switch (why) {
    case Reason::TpExceedsNode:
      return make("--tp", tps, "no tensor-parallel size left fits inside a node of " +
                                   str(p.hardware.gpus_per_node) + " GPUs (it must divide it)",
                  "allow smaller --tp values, or pass --allow-tp-across-nodes");
    case Reason::TpDividesHeads:
      return make("--tp", tps, "no tensor-parallel size left divides num_attention_heads=" +
                                   str(p.model.num_heads) + " and num_key_value_heads=" +
                                   str(p.model.num_kv_heads),
                  "allow --tp values that divide the heads");
    case Reason::PpExceedsLayers:
      return make("--pp", opt.space.pp.empty() ? "any" : str(opt.space.pp.front()),
                  "every pipeline depth left exceeds num_hidden_layers=" + str(p.model.num_layers),
                  "allow fewer pipeline stages");
    default:
      break;
  }
  // The framework's equal-chunk rule (core/framework.h) may have emptied the --pp list before the search.
  const FrameworkSpec f = framework_spec(p.job.framework);
  const int64_t L = p.model.num_layers;
  if (f.equal_pipeline_chunks && !opt.space.pp.empty() &&
      std::none_of(opt.space.pp.begin(), opt.space.pp.end(), [&](int pp) { return L % pp == 0; })) {
    std::string pps;
    for (int pp : opt.space.pp) pps += (pps.empty() ? "" : ",") + str(pp);
    return make("--pp", pps,
                std::string("framework ") + f.name + " needs num_hidden_layers=" + str(L) +
                    " in equal pipeline chunks, and no pipeline depth given divides it",
                "use a --pp dividing " + str(L) + ", or --framework megatron (uneven splits)");
  }
  return make("--gpus", str(p.job.gpus), "no tp*pp left divides the GPU count",
              "use a GPU count that is a multiple of tp*pp, or other --tp/--pp values");
}

template <class T>
std::string join(const std::vector<T>& values, const std::function<std::string(const T&)>& show) {
  std::string out;
  for (const T& v : values) out += (out.empty() ? "" : ",") + show(v);
  return out;
}

std::string show_int(const int64_t& v) { return str(v); }
std::string show_small(const int& v) { return str(v); }
std::string show_recompute(const Recompute& r) { return to_string(r); }
std::string show_schedule(const ScheduleKind& k) { return to_string(k); }
std::string show_on_off(const int& v) { return v ? "on" : "off"; }

// One narrowing flag: how to lift it, how to print the user's values and the fitting value.
struct Relaxation {
  const char* flag;
  std::function<std::string(const SearchSpace&)> given;  // "" when the flag was not used
  std::function<void(SearchSpace&)> lift;
  std::function<std::string(const ParallelConfig&)> show;
};

std::vector<Relaxation> relaxations() {
  return {
      {"--micro-batch", [](const SearchSpace& s) { return join<int64_t>(s.micro_batch, show_int); },
       [](SearchSpace& s) { s.micro_batch.clear(); },
       [](const ParallelConfig& c) { return str(c.micro_batch_size); }},
      {"--recompute", [](const SearchSpace& s) { return join<Recompute>(s.recompute, show_recompute); },
       [](SearchSpace& s) { s.recompute.clear(); },
       [](const ParallelConfig& c) { return std::string(to_string(c.recompute)); }},
      {"--zero", [](const SearchSpace& s) { return join<int>(s.zero, show_small); },
       [](SearchSpace& s) { s.zero.clear(); },
       [](const ParallelConfig& c) { return str(c.zero_stage); }},
      {"--shard-group", [](const SearchSpace& s) { return join<int>(s.shard_group, show_small); },
       [](SearchSpace& s) { s.shard_group.clear(); },
       [](const ParallelConfig& c) { return str(c.shard_group); }},
      {"--sequence-parallel",
       [](const SearchSpace& s) { return join<int>(s.sequence_parallel, show_on_off); },
       [](SearchSpace& s) { s.sequence_parallel.clear(); },
       [](const ParallelConfig& c) { return std::string(c.sequence_parallel ? "on" : "off"); }},
      {"--schedule", [](const SearchSpace& s) { return join<ScheduleKind>(s.schedule, show_schedule); },
       [](SearchSpace& s) { s.schedule.clear(); s.virtual_stages.clear(); },
       [](const ParallelConfig& c) { return std::string(to_string(c.schedule)); }},
      {"--tp",
       [](const SearchSpace& s) {
         return s.max_tp ? "max " + str(s.max_tp) : join<int>(s.tp, show_small);
       },
       [](SearchSpace& s) { s.tp.clear(); s.max_tp = 0; },
       [](const ParallelConfig& c) { return str(c.tp); }},
      {"--pp",
       [](const SearchSpace& s) {
         return s.max_pp ? "max " + str(s.max_pp) : join<int>(s.pp, show_small);
       },
       [](SearchSpace& s) { s.pp.clear(); s.max_pp = 0; },
       [](const ParallelConfig& c) { return str(c.pp); }},
  };
}

// Re-runs the search with one narrowing flag lifted; an Error naming the first flag whose lifting
// makes the problem fit, or nothing.
std::optional<Error> relaxation_that_fits(const Problem& p, const SearchOptions& opt) {
  for (const Relaxation& r : relaxations()) {
    const std::string given = r.given(opt.space);
    if (given.empty()) continue;
    SearchOptions o;
    o.space = opt.space;
    r.lift(o.space);
    o.top_k = 1;
    const SearchResult res = search(p, o);
    if (!res.top.empty())
      return make(r.flag, given, "no configuration fits with this value",
                  "it fits with " + std::string(r.flag) + " " + r.show(res.top.front().config));
  }
  return std::nullopt;
}

}  // namespace

int64_t min_gpus_fully_sharded(const Problem& p) {
  int64_t best = 0;
  for (int64_t tp = 1; tp <= p.hardware.gpus_per_node; ++tp) {
    if (p.model.num_heads % tp != 0 || p.model.num_kv_heads % tp != 0) continue;
    if (p.hardware.gpus_per_node % tp != 0) continue;  // TP stays inside a node
    for (int64_t pp = 1; pp <= p.model.num_layers; pp *= 2) {
      const int64_t dp = min_dp(p, static_cast<int>(tp), static_cast<int>(pp));
      if (dp > 0 && (best == 0 || tp * pp * dp < best)) best = tp * pp * dp;
    }
  }
  return best;
}

Error diagnose_no_plan(const Problem& p, const SearchOptions& opt, const SearchResult& r) {
  assert(r.top.empty());
  const int64_t N = p.job.gpus;
  const LayoutSummary layouts = summarize_layouts(p, opt.space);
  if (layouts.valid == 0) return layout_error(p, opt, r);
  if (!layouts.any_batch_ok && layouts.any_dp_divides && !opt.space.micro_batch.empty())
    return make("--micro-batch", join<int64_t>(opt.space.micro_batch, show_int),
                "no size given divides global_batch/dp for any layout (global batch " +
                    str(p.job.global_batch) + ")",
                "omit --micro-batch to try every divisor");
  if (!layouts.any_batch_ok) {
    const std::string smaller = p.job.global_batch < layouts.min_dp ? "smaller than" : "not a multiple of";
    return make("--global-batch", str(p.job.global_batch),
                "is " + smaller + " the data-parallel size of every layout (smallest dp=" +
                    str(layouts.min_dp) + " on " + str(N) + " GPUs)",
                "use a global batch that is a multiple of " + str(layouts.min_dp) +
                    ", fewer GPUs, or larger --tp/--pp");
  }
  if (std::optional<Error> e = relaxation_that_fits(p, opt)) return *e;
  const int64_t need = min_gpus_fully_sharded(p);
  const std::string gpu = p.hardware.gpu.empty() ? p.hardware.name : p.hardware.gpu;
  if (is_prime(N) && N > p.hardware.gpus_per_node && (need == 0 || need <= N)) {
    const int64_t node = p.hardware.gpus_per_node;
    return make("--gpus", str(N),
                "is prime and larger than a node, so tp can only be 1 (tp must divide " + str(N) +
                    " and stay within gpus_per_node=" + str(node) + "), and no tp=1 layout fits",
                "use a multiple of " + str(node) + " GPUs, e.g. " + str((N / node + 1) * node));
  }
  if (need == 0)
    return make("--seq", str(p.job.seq_len),
                "one layer's activations for one sequence do not fit on a " + gpu +
                    " even with full recomputation",
                "shorten the sequence or use a GPU with more memory");
  if (need > N)
    return make("--gpus", str(N),
                "the model does not fit even fully sharded (ZeRO-3, full recompute, micro-batch 1)",
                "needs at least " + str(need) + " " + gpu + " GPUs");
  return make("--gpus", str(N), "no configuration fits in memory",
              "try --recompute full, a smaller --micro-batch, or more GPUs (fully sharded needs " +
                  str(need) + ")");
}

}  // namespace meshplan
