// Traffic of the flex dispatcher's deduplicated MoE dispatch and combine (DeepEP, HybridEP).
#pragma once
#include <cstdint>

#include "core/parallel_config.h"

namespace meshplan {

/// Probability that one token's k routed experts include at least one of a bucket of `bucket_experts`
/// consecutive experts (one GPU's E/ep, or one NVLink domain's), under uniform routing: with
/// group-limited routing (MoeSpec::router_groups G, router_group_topk g) the token's g groups are a
/// uniform choice of the G and its k experts a uniform choice among the chosen groups' S = g E/G experts;
/// without it the k experts are a uniform choice of the E. A bucket holding j whole groups is missed with
/// probability sum_j P(j of them chosen) C(S - j E/G, k) / C(S, k); a bucket inside one group with
/// (1 - g/G) + (g/G) C(S - b, k) / C(S, k); without groups (or buckets across group edges) C(E - b, k) / C(E, k).
/// Uniform routing is what the published benchmarks force (Megatron-Bridge: "we force-balance the token
/// distribution among experts", moe_router_force_load_balancing: random router logits).
double dispatch_hit_probability(const MoeSpec& x, int64_t bucket_experts);

/// Rows of h elements one GPU sends per routed token in one dispatch (or combine) pass of the flex
/// dispatcher, over EP group of `ep` ranks whose NVLink domains hold `per_domain` of them:
///  - network: one row per other domain holding one of the token's experts, (N - 1) P(domain hit),
///    N = ep / per_domain ("removes redundant tokens during cross-node communication",
///    megatron/core/transformer/moe/README.md; DeepEP sends a token over RDMA once per node, to the GPU of
///    the same local index, which forwards it over NVLink: DeepSeek-V3 report sec. 3.2.2);
///  - nvlink: one row per other destination GPU, (ep - 1) P(GPU hit): each destination receives the token
///    once over NVLink, from its source or from the domain's receiving GPU.
/// The alltoall dispatcher sends k rows per token instead: k (per_domain - 1) / ep of them over NVLink and
/// k (ep - per_domain) / ep over the network.
struct DedupRows {
  double network = 0;
  double nvlink = 0;
};
DedupRows dedup_rows_per_token(const MoeSpec& x, int ep, int per_domain);

/// Seconds of one dispatch (or combine) pass of `tokens` routed tokens of `row_bytes` each on one GPU:
/// the network and NVLink shares run concurrently (max of the two at the profile's link bandwidth and
/// efficiency), plus one latency per link used. EP ranks are consecutive (etp = 1: the flex dispatcher is
/// costed at etp 1 only, core/moe_config.h).
double dedup_dispatch_s(const Problem& p, const ParallelConfig& cfg, double tokens, double row_bytes);

}  // namespace meshplan
