// cp_domain: the context-parallel degrees a search visits.
#include "planner/cp_space.h"

namespace meshplan {

std::vector<int> cp_domain(const Problem& p, const SearchSpace& s) {
  if (!s.cp.empty()) return s.cp;
  std::vector<int> out = {1};
  const int64_t seq = p.job.seq_len;
  if (seq < kCpMinSeq || p.job.knobs.attention != AttentionKind::Fused) return out;
  for (int64_t c : divisors(p.job.gpus)) {
    if (c < 2 || seq % (2 * c) != 0 || seq / c < kCpMinLocalTokens) continue;
    if (p.job.cp_comm == CpComm::AllToAll && (p.model.num_heads % c != 0 || p.model.num_kv_heads % c != 0)) continue;
    out.push_back(static_cast<int>(c));
  }
  return out;
}

}  // namespace meshplan
