// HSDP shard groups of the planner's space (planner/hsdp_space.h).
#include "planner/hsdp_space.h"

#include <algorithm>

#include "core/framework.h"

namespace meshplan {

std::vector<int> hsdp_shard_groups(const Problem& p, const SearchSpace& s, const LayoutDims& d) {
  std::vector<int> out;
  // MoE models: the expert choices (ep) are made after these lists (planner/moe_space.h) and HSDP is not
  // costed with ep > 1 (core/hsdp_config.h), so the search keeps MoE plans plainly sharded.
  if (!framework_spec(p.job.framework).hybrid_sharding() || p.model.moe.enabled() || d.ep > 1 || d.dp < 2) return out;
  const int64_t dp = d.dp;
  auto admissible = [&](int64_t g) { return g > 0 && g < dp && dp % g == 0; };
  if (!s.shard_group.empty()) {
    for (int g : s.shard_group)
      if (admissible(g) && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
    std::sort(out.begin(), out.end());
    return out;
  }
  const int64_t mp = static_cast<int64_t>(d.tp) * std::max(1, d.cp);
  const int64_t node = std::max<int64_t>(1, p.hardware.nvlink_domain() / mp);
  for (int64_t g = node; admissible(g); g *= 2) out.push_back(static_cast<int>(g));
  return out;
}

std::vector<ZeroChoice> sharding_choices(const Problem& p, const SearchSpace& s, const LayoutDims& d) {
  const bool plain = s.shard_group.empty() ||
                     std::any_of(s.shard_group.begin(), s.shard_group.end(),
                                 [&](int g) { return g == 0 || g == d.dp; });
  std::vector<ZeroChoice> out;
  for (int z : d.zeros)
    if (z < 1 || plain) out.push_back({z, 0});
  const std::vector<int> groups = hsdp_shard_groups(p, s, d);
  const std::vector<int>& hsdp_zeros = framework_spec(p.job.framework).hsdp_zero_stages;
  for (int z : d.zeros)
    if (z >= 1 && std::find(hsdp_zeros.begin(), hsdp_zeros.end(), z) != hsdp_zeros.end())
      for (int g : groups) out.push_back({z, g});
  return out;
}

}  // namespace meshplan
