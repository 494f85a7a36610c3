// make_sim_input / uniform_sim_input: cost-model seconds -> simulator nanoseconds (durations.h).
#include "simulator/durations.h"

#include <algorithm>
#include <cmath>

#include "core/megatron_overlap.h"
#include "costmodel/collectives.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/ddp_edge_bucket.h"
#include "costmodel/fp8_params.h"
#include "costmodel/fsdp2_pipeline.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/pipeline.h"

namespace meshplan {

int ep_group_replicas(const ParallelConfig& cfg, int replicas) {
  // Expert ranks are numbered etp-ep-edp over the tp*cp*dp ranks of a stage (Megatron-Core parallel
  // folding), so an EP group of ep*etp ranks covers ep*etp/(tp*cp) DP replicas; of the simulated
  // replicas, those that fall in one group join (the largest divisor of `replicas` not above it).
  const int64_t per_replica = static_cast<int64_t>(cfg.tp) * std::max(1, cfg.cp);
  const int64_t span = std::max<int64_t>(1, static_cast<int64_t>(cfg.ep) * cfg.etp / per_replica);
  int g = 1;
  for (int d = 1; d <= replicas; ++d)
    if (replicas % d == 0 && d <= span) g = d;
  return g;
}

int replicas_needed(const ParallelConfig& cfg, const SimOptions& o) {
  const bool asymmetric = !o.slow_ranks.empty() || !o.slow_links.empty();
  return asymmetric && cfg.dp > 1 ? 2 : 1;
}

Result<bool> check_sim_options(const ParallelConfig& cfg, const SimOptions& o) {
  auto check = [&](const std::vector<std::pair<int, double>>& list, const char* flag) -> Result<bool> {
    for (const auto& [r, f] : list) {
      const std::string v = std::to_string(r) + "=" + std::to_string(f);
      if (r < 0 || r >= cfg.pp)
        return make_error("command line", flag, v, "pipeline rank out of range (pp=" + std::to_string(cfg.pp) + ")",
                          "use a rank in 0.." + std::to_string(cfg.pp - 1));
      if (!(f > 0.0) || f > 1e6)
        return make_error("command line", flag, v, "factor must be a positive number",
                          "e.g. 1.3 for 30% slower");
    }
    return true;
  };
  auto ok = check(o.slow_ranks, "--slow-rank");
  if (ok) ok = check(o.slow_links, "--slow-link");
  if (ok && !o.slow_links.empty() && cfg.pp < 2)
    return make_error("command line", "--slow-link", std::to_string(o.slow_links[0].first),
                      "pp=1 has no pipeline links", "use --slow-rank, or pp >= 2");
  return ok;
}

namespace {

ChunkTimes chunk_times(const ChunkCosts& c, const ParallelConfig& cfg, bool split, bool ideal) {
  ChunkTimes t;
  const double tp_f = ideal ? 0.0 : c.tp_comm_forward_s;
  const double tp_b = ideal ? 0.0 : c.tp_comm_backward_s;
  const double fwd = c.forward_s - c.tp_comm_forward_s + tp_f;
  const double bwd_in = c.backward_input_s - c.tp_comm_backward_s + tp_b;
  t.forward_ns = seconds_to_ns(fwd);
  t.backward_ns = seconds_to_ns(split ? bwd_in : bwd_in + c.backward_weight_s);
  t.weight_ns = split ? seconds_to_ns(c.backward_weight_s) : 0;
  t.tp_forward_ns = seconds_to_ns(tp_f);
  t.tp_backward_ns = seconds_to_ns(tp_b);
  // ZeRO-0/1 accumulate gradients and reduce once per step (R); ZeRO-2/3 keep only a gradient
  // shard, so every micro-batch's gradients are reduce-scattered as its backward produces them
  // (Rajbhandari et al. 2020, sec. 5.2), as the cost model assumes.
  const Nanoseconds reduce = ideal || grad_group_size(cfg) <= 1 ? 0 : seconds_to_ns(c.dp_reduce_s);
  // FSDP2 under a pipeline (torchtitan) reduces once per step after the last backward and gathers
  // once, in micro-batch 0's forward, at ZeRO 2 and 3 alike (costmodel/fsdp2_pipeline.h).
  const bool once = c.gather_once;
  t.dp_reduce_ns = cfg.zero_stage <= 1 || once ? reduce : 0;
  t.reduce_per_micro_batch_ns = cfg.zero_stage >= 2 && !once ? reduce : 0;
  t.layers = std::max(1, c.layers);
  t.gather_once = once;
  // One layer's share of the chunk's per-pass gather (embedding/head weights spread over layers).
  t.gather_ns = ideal || grad_group_size(cfg) <= 1 || (cfg.zero_stage < 3 && !once) ? 0 : seconds_to_ns(c.zero3_gather_s / t.layers);
  // As the cost model: only the layers whose recomputed forward gathers again (costmodel/zero_comm.h).
  t.refetch_layers = static_cast<int>(std::lround(c.zero3_refetch_share * t.layers));
  t.activation_bytes = c.activation_bytes;
  t.ep_forward_ns = ideal ? 0 : seconds_to_ns(c.ep_comm_forward_s);
  t.ep_backward_ns = ideal ? 0 : seconds_to_ns(c.ep_comm_backward_s);
  return t;
}

// ZeRO-1/2: after the optimizer each rank all-gathers the updated 16-bit weight shards of its stage.
std::vector<Nanoseconds> after_gather(const Problem& p, const ParallelConfig& cfg, bool ideal) {
  std::vector<Nanoseconds> out(cfg.pp, 0);
  if (ideal || grad_group_size(cfg) <= 1 || cfg.zero_stage < 1 || cfg.zero_stage > 2 || pipeline_keeps_unsharded(p, cfg))
    return out;
  const GroupPlacement g = zero_shard_group(p.hardware, cfg);  // dp * cp ranks (HSDP: one shard group)
  for (int r = 0; r < cfg.pp; ++r)  // FP8 primary weights gather their FP8 data (costmodel/fp8_params.h)
    out[r] = seconds_to_ns(all_gather_s(
        p.hardware, g, param_gather_bytes(p, cfg, stage_parameters_per_gpu(p.model, cfg, r), stage_layers(p.model, cfg, r))));
  return out;
}

}  // namespace

SimInput make_sim_input(const Problem& p, const ParallelConfig& cfg, const Schedule& s,
                        const StepCosts& costs, const SimOptions& o) {
  SimInput in;
  in.schedule = s;
  const bool split = has_weight_actions(s);
  for (const ChunkCosts& c : costs.chunks) in.chunks.push_back(chunk_times(c, cfg, split, o.ideal_network));
  in.p2p_ns = o.ideal_network ? 0 : seconds_to_ns(costs.p2p_s);
  in.optimizer_ns = seconds_to_ns(costs.optimizer_s);
  in.after_gather_ns = after_gather(p, cfg, o.ideal_network);
  // --overlap-param-gather: the gather runs under the next step's first forward on the stage (as
  // costmodel/step.cpp costs it), so only what outlasts that forward stays at the step's end.
  // The first stage's edge bucket group (the embedding's) is gathered before any forward, so at least
  // its gather stays (costmodel/ddp_edge_bucket.h).
  if (param_gather_overlap_on(p.job, cfg)) {
    const Nanoseconds edge = o.ideal_network ? 0
                                             : seconds_to_ns(edge_bucket_exposure(p, cfg, zero_shard_group(p.hardware, cfg)).gather_s);
    for (int r = 0; r < cfg.pp && r < static_cast<int>(in.after_gather_ns.size()); ++r) {
      Nanoseconds forward = 0;
      for (size_t k = static_cast<size_t>(r); k < in.chunks.size(); k += static_cast<size_t>(cfg.pp))
        forward += in.chunks[k].forward_ns;
      in.after_gather_ns[r] = std::max<Nanoseconds>(r == first_chunk_rank(cfg) ? edge : 0, in.after_gather_ns[r] - forward);
    }
  }
  // FSDP1's prefetch settings (per-unit gathers only; DeepSpeed's buckets prefetch as before).
  if (p.job.knobs.sharding.granularity == ShardGranularity::PerUnit) {
    in.forward_prefetch = p.job.knobs.sharding.forward_prefetch;
    in.backward_prefetch = p.job.knobs.sharding.backward_prefetch;
  }
  in.replicas = replicas_needed(cfg, o);
  in.compute_factor.assign(static_cast<size_t>(in.replicas) * cfg.pp, 1.0);
  in.link_factor.assign(static_cast<size_t>(in.replicas) * cfg.pp, 1.0);
  for (const auto& [r, f] : o.slow_ranks) in.compute_factor[r] *= f;
  for (const auto& [r, f] : o.slow_links) in.link_factor[r] *= f;
  in.overlap_slowdown = kOverlapComputeSlowdown;
  in.ep_group_replicas = ep_group_replicas(cfg, in.replicas);
  in.record_spans = o.record_spans;
  return in;
}

SimInput uniform_sim_input(const Schedule& s, Nanoseconds forward_ns, Nanoseconds backward_ns) {
  SimInput in;
  in.schedule = s;
  const bool split = has_weight_actions(s);
  ChunkTimes t;
  t.forward_ns = forward_ns;
  t.backward_ns = split ? backward_ns / 2 : backward_ns;
  t.weight_ns = split ? backward_ns - backward_ns / 2 : 0;
  t.activation_bytes = 1.0;
  in.chunks.assign(static_cast<size_t>(s.pp) * s.virtual_stages, t);
  return in;
}

}  // namespace meshplan
