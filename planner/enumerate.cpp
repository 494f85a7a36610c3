// The search space: per-dimension domains, validity rules by reason, and the plain enumerator.
#include "planner/enumerate.h"

#include "planner/pipeline_balance.h"

#include <algorithm>
#include <cassert>

#include "core/framework.h"
#include "core/job_features.h"
#include "core/pipeline_placement.h"
#include "planner/cp_space.h"
#include "planner/framework_space.h"
#include "planner/hsdp_space.h"
#include "planner/moe_space.h"
#include "planner/graph_space.h"
#include "planner/offload_space.h"
#include "planner/pipeline_balance.h"

namespace meshplan {

const char* reason_name(Reason r) {
  switch (r) {
    case Reason::None: return "none";
    case Reason::GpusDivisible: return "gpus-divisible";
    case Reason::TpDividesHeads: return "tp-divides-heads";
    case Reason::TpExceedsNode: return "tp-exceeds-node";
    case Reason::PpExceedsLayers: return "pp-exceeds-layers";
    case Reason::SequenceParallelNeedsTp: return "sequence-parallel-needs-tp";
    case Reason::Batch: return "batch";
    case Reason::InterleavedNeedsPp: return "interleaved-needs-pp";
    case Reason::InterleavedMicroBatches: return "interleaved-micro-batches";
    case Reason::Memory: return "memory";
    case Reason::DualPipeVMicroBatches: return "dualpipev-micro-batches";
  }
  return "?";
}

const char* reason_description(Reason r) {
  switch (r) {
    case Reason::None: return "valid";
    case Reason::GpusDivisible: return "tp*pp does not divide the GPU count";
    case Reason::TpDividesHeads: return "tp does not divide the attention (and key/value) heads";
    case Reason::TpExceedsNode:
      return "tp does not fit inside a node: larger than it or not dividing it "
             "(--allow-tp-across-nodes lifts it)";
    case Reason::PpExceedsLayers: return "pp*v model chunks exceed the number of layers";
    case Reason::SequenceParallelNeedsTp: return "sequence parallelism needs tp > 1";
    case Reason::Batch: return "global batch is not a multiple of dp*micro_batch";
    case Reason::InterleavedNeedsPp: return "interleaved needs pp >= 2 and v >= 2, dualpipev pp >= 2 and v = 2";
    case Reason::InterleavedMicroBatches: return "interleaved needs micro-batches to be a multiple of pp";
    case Reason::Memory: return "peak memory exceeds the usable GPU memory";
    case Reason::DualPipeVMicroBatches: return "dualpipev needs at least 2 pp micro-batches";
  }
  return "?";
}

int64_t RejectCounts::total() const {
  int64_t t = 0;
  for (int64_t v : n) t += v;
  return t;
}

std::vector<int64_t> divisors(int64_t n) {
  assert(n >= 1);
  std::vector<int64_t> low, high;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

static std::vector<int> capped(std::vector<int64_t> values, int cap) {
  std::vector<int> out;
  for (int64_t v : values)
    if (cap <= 0 || v <= cap) out.push_back(static_cast<int>(v));
  return out;
}

static std::vector<int64_t> widen(const std::vector<int>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

std::vector<int> tp_domain(const Problem& p, const SearchSpace& s) {
  std::vector<int> out = capped(s.tp.empty() ? divisors(p.job.gpus) : widen(s.tp), s.max_tp);
  return framework_tp_domain(framework_spec(p.job.framework), out);
}

std::vector<int> pp_domain(const Problem& p, const SearchSpace& s, int tp) {
  std::vector<int> out;
  if (!s.pp.empty()) out = capped(widen(s.pp), s.max_pp);
  else if (p.job.gpus % tp != 0) out = {1};  // the layout is rejected anyway (gpus-divisible)
  else out = capped(divisors(p.job.gpus / tp), s.max_pp);
  return framework_pp_domain(framework_spec(p.job.framework), p.model.num_layers, out);
}

static std::vector<int64_t> micro_batch_domain(const Problem& p, const SearchSpace& s, int64_t dp) {
  if (!s.micro_batch.empty()) {
    std::vector<int64_t> mbs = s.micro_batch;
    std::sort(mbs.begin(), mbs.end());
    mbs.erase(std::unique(mbs.begin(), mbs.end()), mbs.end());
    return mbs;
  }
  const int64_t B = p.job.global_batch;
  // When dp does not divide the batch every micro-batch fails the batch rule; the divisors of B are
  // what a naive enumeration would try.
  return divisors(B % dp == 0 ? B / dp : B);
}

// Interleaved virtual stages. Where pp divides the layers, equal chunks: v divides L/pp (v >= 2).
// Where it does not (Qwen3-235B's 94 layers, DeepSeek-V3's 61 over pp 8 or 16), the chunks are
// uneven, as Megatron-LM states with --pipeline-model-parallel-layout (planner/export.cpp) and as
// meshplan's executor splits them; then v from {2, 3, 4, 6, 8, 12, 16, ...} (doubling 2 and 3) with
// pp*v <= L, each chunk at least one layer (Megatron-Bridge's MoE recipes run VP 2-12: 4 for
// Qwen3-235B and DeepSeek-V3 over PP 8). Frameworks that need equal chunks drop the uneven ones
// (restrict_to_framework).
static std::vector<int> default_virtual_stages(const Problem& p, int pp) {
  const int64_t L = p.model.num_layers;
  std::vector<int> out;
  if (pp < 2) return out;
  if (L % pp == 0) {
    for (int64_t v : divisors(L / pp))
      if (v >= 2) out.push_back(static_cast<int>(v));
  } else {
    for (int64_t base : {int64_t{2}, int64_t{3}})
      for (int64_t v = base; static_cast<int64_t>(pp) * v <= L; v *= 2) out.push_back(static_cast<int>(v));
  }
  // Megatron's embedding-and-loss split (planner/pipeline_balance.h): v with pp*v dividing L + 2, up to
  // one slot per chunk (Llama 3.1 405B's 126 + 2 over PP 16 x VP 8).
  for (int64_t v = 2; static_cast<int64_t>(pp) * v <= L + 2; ++v)
    if ((L + 2) % (static_cast<int64_t>(pp) * v) == 0) out.push_back(static_cast<int>(v));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Each schedule with the even split and, where the framework takes uneven chunks (Megatron's
// --pipeline-model-parallel-layout, meshplan's executor) and they differ, the head-aware balanced split
// and the embedding-and-loss one (planner/pipeline_balance.h); --pipeline-split narrows to some of them.
static std::vector<ScheduleChoice> with_balanced_splits(const Problem& p, const SearchSpace& s, int pp,
                                                        const std::vector<ScheduleChoice>& choices) {
  const bool want_even = s.pipeline_split.empty() || std::count(s.pipeline_split.begin(), s.pipeline_split.end(), 0);
  const bool want_balanced =
      s.pipeline_split.empty() || std::count(s.pipeline_split.begin(), s.pipeline_split.end(), 1);
  const bool want_ends = s.pipeline_split.empty() || std::count(s.pipeline_split.begin(), s.pipeline_split.end(), 2);
  const bool uneven_ok = !framework_spec(p.job.framework).equal_pipeline_chunks;
  const int64_t L = p.model.num_layers;
  std::vector<ScheduleChoice> out;
  for (const ScheduleChoice& sc : choices) {
    if (v_shaped(sc.kind)) {  // the balancers place chunks in a loop; a V gets the even split
      if (static_cast<int64_t>(pp) * sc.virtual_stages <= L) out.push_back(sc);
      continue;
    }
    std::vector<int> balanced, ends;
    if (pp > 1 && uneven_ok && want_balanced) balanced = balanced_layers_per_chunk(p, pp, sc.virtual_stages);
    if (pp > 1 && uneven_ok && want_ends) ends = embedding_loss_layers_per_chunk(p.model, pp, sc.virtual_stages);
    if (ends == balanced) ends.clear();
    // A v that only the embedding-and-loss split admits (pp*v > L) has no even or balanced candidate.
    const bool even_fits = static_cast<int64_t>(pp) * std::max(1, sc.virtual_stages) <= L;
    // Without a balanced split that differs, the even one stands for it (the rules still apply to it).
    if ((want_even || (balanced.empty() && ends.empty())) && (even_fits || ends.empty())) out.push_back(sc);
    for (const std::vector<int>* split : {&balanced, &ends}) {
      if (split->empty()) continue;
      ScheduleChoice b = sc;
      b.layers_per_chunk = *split;
      out.push_back(b);
    }
  }
  return out;
}

static std::vector<ScheduleChoice> schedule_domain(const Problem& p, const SearchSpace& s, int pp) {
  const std::vector<ScheduleKind> all = {ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                                         ScheduleKind::ZeroBubbleH1, ScheduleKind::GPipe,
                                         ScheduleKind::DualPipeV};
  std::vector<ScheduleChoice> out;
  if (pp == 1 && s.schedule.empty()) return {{ScheduleKind::OneFOneB, 1, {}}};
  for (ScheduleKind k : s.schedule.empty() ? all : s.schedule) {
    if (k == ScheduleKind::DualPipeV) {  // two chunks per rank, in a V (core/pipeline_placement.h)
      out.push_back({k, 2, {}});
      continue;
    }
    if (k != ScheduleKind::Interleaved) {
      out.push_back({k, 1, {}});
      continue;
    }
    std::vector<int> vs = s.virtual_stages.empty() ? default_virtual_stages(p, pp) : s.virtual_stages;
    if (pp == 1) vs = {s.virtual_stages.empty() ? 2 : s.virtual_stages.front()};  // rejected: pp < 2
    for (int v : vs) out.push_back({k, v, {}});
  }
  return with_balanced_splits(p, s, pp, out);
}

LayoutDims layout_dims(const Problem& p, const SearchSpace& s, int tp, int pp, int cp) {
  LayoutDims d;
  d.tp = tp;
  d.pp = pp;
  d.cp = cp;
  const int64_t mp = static_cast<int64_t>(tp) * pp * cp;
  if (tp < 1 || pp < 1 || cp < 1 || p.job.gpus % mp != 0) return d;  // dp stays 0: undefined
  d.dp = p.job.gpus / mp;
  d.micro_batches = micro_batch_domain(p, s, d.dp);
  d.schedules = schedule_domain(p, s, pp);
  d.zeros = s.zero.empty() ? std::vector<int>{0, 1, 2, 3} : s.zero;
  if (!s.sequence_parallel.empty()) d.sequence_parallel = s.sequence_parallel;
  else d.sequence_parallel = tp > 1 ? std::vector<int>{1, 0} : std::vector<int>{0};
  for (Recompute r : {Recompute::Full, Recompute::Selective, Recompute::None})
    if (s.recompute.empty() || std::count(s.recompute.begin(), s.recompute.end(), r))
      d.recomputes.push_back(r);
  restrict_to_framework(framework_spec(p.job.framework), p.model.num_layers, d);
  d.schedules.erase(std::remove_if(d.schedules.begin(), d.schedules.end(),
                                   [&](const ScheduleChoice& sc) { return !schedule_admits_compile(p.job, sc.kind); }),
                    d.schedules.end());  // torchtitan's DualPipeV without torch.compile (core/framework.h)
  restrict_to_moe(p, d);
  restrict_to_offload(p, d);  // planner/offload_space.h
  restrict_to_graphs(p, d);   // planner/graph_space.h
  // A compressed DP reduction replaces DDP's all-reduce: ZeRO 0 only (core/job_features.h).
  // FP8 primary weights need the distributed optimizer or Megatron-FSDP: ZeRO 1+ (core/job_features.h),
  // and so does the precision-aware optimizer (core/optimizer_states.h).
  d.zeros.erase(std::remove_if(d.zeros.begin(), d.zeros.end(),
                               [&](int z) {
                                 return !compression_zero_rule(p.job.compression, z).empty() ||
                                        !fp8_param_gather_zero_rule(p.job, z).empty() ||
                                        !precision_aware_zero_rule(p.job.knobs.optimizer_states, z).empty();
                               }),
                d.zeros.end());
  if (!s.dp_overlap.empty()) d.dp_overlaps = s.dp_overlap;
  else d.dp_overlaps = d.dp > 1 ? std::vector<int>{1, 0} : std::vector<int>{1};
  restrict_to_megatron_overlaps(p, d);  // planner/framework_space.h
  d.shardings = sharding_choices(p, s, d);  // ZeRO stages x HSDP shard groups (planner/hsdp_space.h)
  return d;
}

Reason check_layout(const Problem& p, int tp, int pp, int cp) {
  if (tp < 1 || pp < 1 || cp < 1 || p.job.gpus % (static_cast<int64_t>(tp) * pp * cp) != 0)
    return Reason::GpusDivisible;
  if (p.model.num_heads % tp != 0 || p.model.num_kv_heads % tp != 0) return Reason::TpDividesHeads;
  if ((tp > p.hardware.nvlink_domain() || p.hardware.nvlink_domain() % tp != 0) &&
      !p.job.allow_tp_across_nodes)
    return Reason::TpExceedsNode;  // TP groups (tp consecutive ranks) must stay inside a node
  if (pp > p.model.num_layers) return Reason::PpExceedsLayers;
  return Reason::None;
}

// Rules in the order the search loops meet them: layout, micro-batch, schedule, then SP.
Reason classify_config(const Problem& p, const ParallelConfig& c) {
  Reason r = check_layout(p, c.tp, c.pp, c.cp);
  if (r != Reason::None) return r;
  assert(c.zero_stage >= 0 && c.zero_stage <= 3 && "zero stages are checked by the CLI");
  if (c.micro_batch_size < 1 || c.num_micro_batches < 1 ||
      c.micro_batch_size * c.num_micro_batches * c.dp != p.job.global_batch)
    return Reason::Batch;
  const bool interleaved = c.schedule == ScheduleKind::Interleaved;
  const bool dualpipev = c.schedule == ScheduleKind::DualPipeV;
  if (dualpipev ? (c.pp < 2 || c.virtual_stages != 2)
                : interleaved ? (c.pp < 2 || c.virtual_stages < 2) : c.virtual_stages != 1)
    return Reason::InterleavedNeedsPp;
  const int64_t chunks = static_cast<int64_t>(c.pp) * c.virtual_stages;
  if (c.layers_per_stage.empty() ? chunks > p.model.num_layers
                                 : !layer_split_ok(c.layers_per_stage, chunks, p.model.num_layers))
    return Reason::PpExceedsLayers;
  if (interleaved && c.num_micro_batches % c.pp != 0) return Reason::InterleavedMicroBatches;
  if (dualpipev && c.num_micro_batches < 2 * static_cast<int64_t>(c.pp)) return Reason::DualPipeVMicroBatches;
  if (c.sequence_parallel && c.tp == 1) return Reason::SequenceParallelNeedsTp;
  return Reason::None;
}

int64_t count_per_micro_batch(const LayoutDims& d) {
  return static_cast<int64_t>(d.schedules.size()) * d.shardings.size() * d.sequence_parallel.size() *
         d.recomputes.size() * d.dp_overlaps.size();
}

int64_t count_layout(const LayoutDims& d) {
  if (d.dp == 0) return 1;
  return static_cast<int64_t>(d.micro_batches.size()) * count_per_micro_batch(d);
}

int64_t count_layout_all_experts(const Problem& p, const SearchSpace& s, const LayoutDims& d) {
  if (d.dp == 0) return 1;
  return count_layout(d) * static_cast<int64_t>(expert_domain(p, s, d.tp, d.dp, d.cp).size());
}

int64_t count_space(const Problem& p, const SearchSpace& s) {
  int64_t n = 0;
  for (int tp : tp_domain(p, s))
    for (int cp : cp_domain(p, s))
      for (int pp : pp_domain(p, s, tp * cp)) n += count_layout_all_experts(p, s, layout_dims(p, s, tp, pp, cp));
  return n;
}

ParallelConfig make_candidate(const Problem& p, const LayoutDims& d, int64_t micro_batch,
                              const ScheduleChoice& sc, const ZeroChoice& zero, int sp, Recompute rc,
                              int overlap) {
  ParallelConfig c;
  c.tp = d.tp;
  c.pp = d.pp;
  c.cp = d.cp;
  c.dp = static_cast<int>(d.dp);
  c.zero_stage = zero.stage;
  c.shard_group = zero.shard_group;
  c.micro_batch_size = micro_batch;
  const int64_t per_step = d.dp * micro_batch;
  c.num_micro_batches = per_step > 0 && p.job.global_batch % per_step == 0
                            ? p.job.global_batch / per_step : 0;
  c.recompute = rc;
  c.sequence_parallel = sp != 0;
  c.schedule = sc.kind;
  c.virtual_stages = sc.virtual_stages;
  c.layers_per_stage = sc.layers_per_chunk;
  c.dp_overlap = overlap != 0;
  c.ep = d.ep;
  c.etp = d.etp;
  return c;
}

void for_each_config(const Problem& p, const SearchSpace& s,
                     const std::function<void(const ParallelConfig&, Reason, int64_t)>& visit) {
  for (int tp : tp_domain(p, s)) {
    for (int cp : cp_domain(p, s)) {
    for (int pp : pp_domain(p, s, tp * cp)) {
      LayoutDims d = layout_dims(p, s, tp, pp, cp);
      if (d.dp == 0) {
        ParallelConfig c;
        c.tp = tp;
        c.pp = pp;
        c.cp = cp;
        c.dp = 0;
        visit(c, Reason::GpusDivisible, 1);
        continue;
      }
      for (const ExpertChoice& ec : expert_domain(p, s, tp, d.dp, cp)) {
      d.ep = ec.ep;
      d.etp = ec.etp;
      for (int64_t mb : d.micro_batches)
        for (const ScheduleChoice& sc : d.schedules)
          for (const ZeroChoice& z : d.shardings)
            for (int sp : d.sequence_parallel)
              for (Recompute rc : d.recomputes)
                for (int ov : d.dp_overlaps) {
                  ParallelConfig c = make_candidate(p, d, mb, sc, z, sp, rc, ov);
                  visit(c, classify_config(p, c), 1);
                }
      }
    }
    }
  }
}

}  // namespace meshplan
