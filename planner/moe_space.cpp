// Expert-layout domain of the search (planner/moe_space.h).
#include "planner/moe_space.h"

#include <algorithm>

namespace meshplan {

std::vector<ExpertChoice> expert_domain(const Problem& p, const SearchSpace& s, int tp, int64_t dp, int cp) {
  const MoeSpec& moe = p.model.moe;
  if (!moe.enabled() || dp < 1) return {ExpertChoice{}};
  const int64_t folded = static_cast<int64_t>(tp) * cp * dp;
  const int gpn = p.hardware.gpus_per_node;
  std::vector<int64_t> eps = s.ep.empty() ? divisors(moe.num_experts) : std::vector<int64_t>(s.ep.begin(), s.ep.end());
  std::vector<int> etps = s.etp;
  if (etps.empty()) {
    etps = {1};
    if (tp > 1) etps.push_back(tp);
  }
  std::sort(etps.begin(), etps.end());
  etps.erase(std::unique(etps.begin(), etps.end()), etps.end());
  std::vector<ExpertChoice> out;
  for (int64_t ep : eps) {
    if (ep < 1 || moe.num_experts % ep != 0) continue;
    if (ep == 1 && p.job.knobs.moe_a2a_overlap) continue;  // the overlap needs EP (core/moe_config.h)
    for (int etp : etps) {
      if (etp < 1 || folded % (ep * etp) != 0) continue;
      if ((etp > gpn || gpn % etp != 0) && !p.job.allow_tp_across_nodes) continue;
      out.push_back({static_cast<int>(ep), etp});
    }
  }
  return out;
}

void restrict_to_moe(const Problem& p, LayoutDims& d) {
  if (!p.model.moe.enabled()) return;
  if (d.tp > 1) d.sequence_parallel.erase(std::remove(d.sequence_parallel.begin(), d.sequence_parallel.end(), 0),
                                          d.sequence_parallel.end());
  // ZeRO-3 shards the experts over the expert-data group (costmodel/expert_fsdp.h); DeepSpeed refuses
  // it with MoE layers (core/framework.cpp validate_framework).
  if (p.job.framework == Framework::DeepSpeed)
    d.zeros.erase(std::remove_if(d.zeros.begin(), d.zeros.end(), [](int z) { return z >= 3; }), d.zeros.end());
  if (!p.job.knobs.moe_a2a_overlap) return;
  // --moe-a2a-overlap: no full recompute, and a virtual pipeline whenever pp > 1 (core/moe_config.h).
  d.recomputes.erase(std::remove(d.recomputes.begin(), d.recomputes.end(), Recompute::Full), d.recomputes.end());
  if (d.pp > 1)
    d.schedules.erase(std::remove_if(d.schedules.begin(), d.schedules.end(),
                                     [](const ScheduleChoice& sc) { return sc.virtual_stages <= 1; }),
                      d.schedules.end());
}

}  // namespace meshplan
