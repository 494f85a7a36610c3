// Objective figures, the tie-breaking order of configurations and the best-K list.
#include "planner/ranking.h"

#include <algorithm>
#include <functional>
#include <tuple>

namespace meshplan {

const char* to_string(Objective o) {
  switch (o) {
    case Objective::StepTime: return "step-time";
    case Objective::TokensPerS: return "tokens-per-s";
    case Objective::Mfu: return "mfu";
    case Objective::Cost: return "cost";
  }
  return "?";
}

std::optional<Objective> parse_objective(const std::string& s) {
  for (auto o : {Objective::StepTime, Objective::TokensPerS, Objective::Mfu, Objective::Cost})
    if (s == to_string(o)) return o;
  if (s == "time") return Objective::StepTime;
  return std::nullopt;
}

const char* objective_unit(Objective o) {
  switch (o) {
    case Objective::StepTime: return "s";
    case Objective::TokensPerS: return "tokens/s";
    case Objective::Mfu: return "MFU";
    case Objective::Cost: return "$/Mtok";
  }
  return "?";
}

double objective_value(const Problem& p, Objective o, double dollars_per_gpu_hour,
                       const StepEstimate& e) {
  switch (o) {
    case Objective::StepTime: return e.time.step_s;
    case Objective::TokensPerS: return e.throughput.tokens_per_s;
    case Objective::Mfu: return e.throughput.mfu;
    case Objective::Cost: {
      const double price = dollars_per_gpu_hour > 0 ? dollars_per_gpu_hour
                                                     : p.hardware.dollars_per_gpu_hour;
      // Dollars for one million tokens: N GPUs for step_s seconds per B*S tokens.
      const double tokens = static_cast<double>(p.job.global_batch) * p.job.seq_len;
      return static_cast<double>(p.job.gpus) * price / 3600.0 * e.time.step_s / tokens * 1e6;
    }
  }
  return 0.0;
}

static int schedule_rank(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::OneFOneB: return 0;
    case ScheduleKind::Interleaved: return 1;
    case ScheduleKind::ZeroBubbleH1: return 2;
    case ScheduleKind::GPipe: return 3;
    case ScheduleKind::DualPipeV: return 4;
  }
  return 4;
}

static auto order_key(const ParallelConfig& c) {
  return std::make_tuple(c.pp, c.tp, c.zero_stage, schedule_rank(c.schedule), c.virtual_stages,
                         static_cast<int>(c.recompute), !c.sequence_parallel, -c.micro_batch_size,
                         !c.dp_overlap, c.ep, c.etp, c.shard_group,  // ep, etp, shard group last: 1, 1, 0 by default
                         std::cref(c.layers_per_stage));              // the even split (empty) before a balanced one
}

bool config_less(const ParallelConfig& a, const ParallelConfig& b) {
  return order_key(a) < order_key(b);
}

bool estimate_better(const StepEstimate& a, const StepEstimate& b) {
  if (a.time.step_s != b.time.step_s) return a.time.step_s < b.time.step_s;
  // Equally fast: more memory headroom first (e.g. ZeRO-2 over ZeRO-1 when DP traffic is hidden).
  if (a.memory.peak_bytes != b.memory.peak_bytes) return a.memory.peak_bytes < b.memory.peak_bytes;
  return config_less(a.config, b.config);
}

void TopK::offer(const StepEstimate& e) {
  if (k_ <= 0) return;
  if (full() && !estimate_better(e, best_.back())) return;
  auto at = std::upper_bound(best_.begin(), best_.end(), e, estimate_better);
  best_.insert(at, e);
  if (static_cast<int>(best_.size()) > k_) best_.pop_back();
}

}  // namespace meshplan
