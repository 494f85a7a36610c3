// The flex dispatcher's deduplicated dispatch and combine: hit probabilities, rows, time (costmodel/moe_dedup_dispatch.h).
#include "costmodel/moe_dedup_dispatch.h"

#include <algorithm>

namespace meshplan {

namespace {
// C(n - m, k) / C(n, k): the chance that k uniform picks out of n avoid m given items.
double miss_all(double n, double m, int64_t k) {
  double r = 1.0;
  for (int64_t i = 0; i < k; ++i) {
    const double num = n - m - static_cast<double>(i), den = n - static_cast<double>(i);
    if (num <= 0.0 || den <= 0.0) return 0.0;
    r *= num / den;
  }
  return r;
}

// C(n, r) as a double (small n: router groups).
double choose(int64_t n, int64_t r) {
  if (r < 0 || r > n) return 0.0;
  double c = 1.0;
  for (int64_t i = 1; i <= r; ++i) c = c * static_cast<double>(n - r + i) / static_cast<double>(i);
  return c;
}
}  // namespace

double dispatch_hit_probability(const MoeSpec& x, int64_t b) {
  const int64_t E = x.num_experts, k = x.experts_per_token;
  if (E <= 0 || k <= 0 || b <= 0) return 0.0;
  if (b >= E) return 1.0;
  const int64_t G = x.router_groups, g = x.router_group_topk;
  const bool limited = G > 1 && g < G && E % G == 0;
  const int64_t group = limited ? E / G : E;
  if (!limited || (b % group != 0 && group % b != 0))  // no limit, or a bucket across group edges
    return 1.0 - miss_all(static_cast<double>(E), static_cast<double>(b), k);
  const double S = static_cast<double>(g * group);  // experts of the chosen groups
  if (group % b == 0) {  // the bucket lies inside one group
    const double chosen = static_cast<double>(g) / static_cast<double>(G);
    return 1.0 - ((1.0 - chosen) + chosen * miss_all(S, static_cast<double>(b), k));
  }
  const int64_t held = b / group;  // whole groups in the bucket
  double miss = 0.0;
  for (int64_t j = 0; j <= std::min(held, g); ++j) {
    const double pj = choose(held, j) * choose(G - held, g - j) / choose(G, g);
    miss += pj * miss_all(S, static_cast<double>(j * group), k);
  }
  return 1.0 - miss;
}

DedupRows dedup_rows_per_token(const MoeSpec& x, int ep, int per_domain) {
  DedupRows r;
  if (ep <= 1 || !x.enabled()) return r;
  per_domain = std::clamp(per_domain, 1, ep);
  const int64_t per_gpu = x.num_experts / ep;
  const int domains = (ep + per_domain - 1) / per_domain;
  r.nvlink = (ep - 1) * dispatch_hit_probability(x, per_gpu);
  if (domains > 1) r.network = (domains - 1) * dispatch_hit_probability(x, per_gpu * per_domain);
  return r;
}

double dedup_dispatch_s(const Problem& p, const ParallelConfig& cfg, double tokens, double row_bytes) {
  const HardwareProfile& hw = p.hardware;
  if (cfg.ep <= 1 || tokens <= 0.0) return 0.0;
  const int per_domain = std::min(cfg.ep, std::max(1, hw.nvlink_domain()));
  const DedupRows rows = dedup_rows_per_token(p.model.moe, cfg.ep, per_domain);
  const double nvlink = rows.nvlink * tokens * row_bytes / (hw.intra_node.bandwidth_bytes_per_s * hw.intra_node.efficiency);
  const double network = rows.network * tokens * row_bytes /
                         (hw.inter_node.bandwidth_bytes_per_s * hw.inter_node.efficiency);
  return std::max(nvlink, network) + (rows.nvlink > 0.0 ? hw.intra_node.latency_s : 0.0) +
         (rows.network > 0.0 ? hw.inter_node.latency_s : 0.0);
}

}  // namespace meshplan
