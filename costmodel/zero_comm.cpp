// ZeRO-3 / FSDP collective granularity, prefetch and exposure (costmodel/README.md "ZeRO-3 and FSDP").
#include "costmodel/zero_comm.h"

#include <algorithm>
#include <cmath>

#include "costmodel/ac_policy.h"
#include "costmodel/expert_fsdp.h"
#include "costmodel/grad_accumulation.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/pipeline.h"

namespace meshplan {

int layer_weight_matrices(const ModelSpec& m) { return 4 + (m.mlp == MlpKind::Gated ? 3 : 2); }

namespace {
// `count` equal collectives moving `bytes` in all.
double split_gather_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes, double count) {
  return count * all_gather_s(hw, g, bytes / count);
}
double split_reduce_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes, double count) {
  return count * reduce_scatter_s(hw, g, bytes / count);
}
// ZeRO-3 with EP: each block also gathers its routed experts and reduce-scatters their gradients over
// the expert-data group, after its own collectives on the same streams (costmodel/expert_fsdp.h).
void add_expert_collectives(const Problem& p, const ParallelConfig& cfg, ShardedCollectives& c) {
  const ExpertLayerCollectives x = expert_layer_collectives(p, cfg);
  c.gather_layer_s += x.gather_s;
  c.reduce_layer_s += x.reduce_s;
}
}  // namespace

ShardedCollectives sharded_collectives(const Problem& p, const ParallelConfig& cfg, int stage,
                                       const GroupPlacement& g) {
  const HardwareProfile& hw = p.hardware;
  const ShardingKnobs& k = p.job.knobs.sharding;
  const ParamBytes pb = param_bytes(p.job);
  const double reduce_bytes = grad_reduce_bytes_per_param(p);  // on the wire (FrameworkKnobs::dp_reduce_bytes)
  const double layer = layer_parameters_per_gpu(p.model, cfg.tp);
  ShardedCollectives c;
  c.layers = stage_layers(p.model, cfg, stage);
  const double ends = stage_parameters_per_gpu(p.model, cfg, stage) - c.layers * layer;
  if (k.granularity == ShardGranularity::PerUnit) {
    c.gather_layer_s = all_gather_s(hw, g, layer * pb.weights);
    c.gather_ends_s = all_gather_s(hw, g, ends * pb.weights);
    // HSDP all-reduces each unit's reduced shard across the replicas (costmodel/hsdp.h); the last
    // layer's all-reduce drains after the pass, with the root unit's reduction.
    const HsdpPassReduce r = hsdp_pass_reduce(hw, cfg, g, c.layers, layer * reduce_bytes, ends * reduce_bytes);
    c.reduce_layer_s = r.layer_s;
    c.reduce_ends_s = r.ends_s;
    c.prefetch_fraction = 1.0;
    add_expert_collectives(p, cfg, c);
    return c;
  }
  const double prefetch = std::max(1.0, k.prefetch_bucket_elements);
  const double fetches = std::max<double>(layer_weight_matrices(p.model), std::ceil(layer / prefetch));
  c.gather_layer_s = split_gather_s(hw, g, layer * pb.weights, fetches);
  c.gather_ends_s = ends > 0 ? split_gather_s(hw, g, ends * pb.weights, std::ceil(ends / prefetch)) : 0.0;
  // Reduce buckets fill across layers: ceil(P_stage / bucket) collectives per pass, each layer
  // paying its share by bytes.
  const double total = c.layers * layer + ends;
  const double buckets = std::ceil(total / std::max(1.0, k.reduce_bucket_elements));
  const HsdpReduce red = hsdp_unit_reduce(hw, cfg, split_reduce_s(hw, g, total * reduce_bytes, buckets), total * reduce_bytes);
  const double all_rs = red.per_unit_s + red.drain_s;
  c.reduce_layer_s = total > 0 ? all_rs * layer / total : 0.0;
  c.reduce_ends_s = total > 0 ? all_rs * ends / total : 0.0;
  c.prefetch_fraction = std::min(1.0, prefetch / std::max(1.0, layer));
  add_expert_collectives(p, cfg, c);
  return c;
}

namespace {
double hidden_miss(double comm, double compute, double f) {
  return (1.0 - f) * comm + std::max(0.0, f * comm - compute);
}
}  // namespace

double zero3_refetch_share(const Problem& p, const ParallelConfig& cfg) {
  if (p.job.knobs.sharding.granularity != ShardGranularity::Buckets) return 0.0;
  return recomputed_layer_share(p.job.ac_policy, cfg.recompute);
}

// (1 + r) * gather is exact for r = 0 and r = 1, so whole-model recompute keeps its old figures.
double zero3_total_s(const ShardedCollectives& c, double r) {
  const double L = static_cast<double>(c.layers);
  return c.gather_ends_s + L * c.gather_layer_s +                              // forward
         L * ((1.0 + r) * c.gather_layer_s + c.reduce_layer_s) + c.reduce_ends_s;  // backward
}

// Forward: with prefetch each gather hides behind the previous layer; without (FSDP1's
// forward_prefetch=False) every gather is issued as its own layer starts and waits in the open.
static double forward_exposed_s(const ShardedCollectives& c, double x_f, bool prefetch) {
  const double L = static_cast<double>(c.layers);
  if (!prefetch) return c.gather_ends_s + L * c.gather_layer_s;
  return c.gather_ends_s + c.gather_layer_s + (L - 1.0) * hidden_miss(c.gather_layer_s, x_f, c.prefetch_fraction);
}

// Backward, per BackwardPrefetch (core/framework_knobs.h). Pre: layer i's compute hides layer i-1's
// (1 + r) gathers and layer i+1's reduce-scatter. Post: every gather waits in the open after the
// previous layer's compute, and the reduce-scatter issued behind it runs under the next layer's
// compute. None: the reduce-scatter is queued first and the gather waits for it: all exposed.
static double backward_exposed_s(const ShardedCollectives& c, double x_b, double r, BackwardPrefetch b) {
  const double L = static_cast<double>(c.layers);
  const double gather = (1.0 + r) * c.gather_layer_s;
  switch (b) {
    case BackwardPrefetch::Pre:
      return gather + (L - 1.0) * hidden_miss(gather + c.reduce_layer_s, x_b, c.prefetch_fraction) +
             c.reduce_layer_s + c.reduce_ends_s;
    case BackwardPrefetch::Post:
      return L * gather + (L - 1.0) * std::max(0.0, c.reduce_layer_s - x_b) + c.reduce_layer_s + c.reduce_ends_s;
    case BackwardPrefetch::None:
      return L * (gather + c.reduce_layer_s) + c.reduce_ends_s;
  }
  return L * (gather + c.reduce_layer_s) + c.reduce_ends_s;
}

double zero3_exposed_s(const ShardedCollectives& c, double x_f, double x_b, double r, const ShardingKnobs& k) {
  if (k.prefetch_depth <= 0 || c.layers == 0) return zero3_total_s(c, r);
  return forward_exposed_s(c, x_f, k.forward_prefetch) + backward_exposed_s(c, x_b, r, k.backward_prefetch);
}

}  // namespace meshplan
