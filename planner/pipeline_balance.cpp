// The head-aware balanced and the embedding-and-loss pipeline splits (planner/pipeline_balance.h).
#include "planner/pipeline_balance.h"

#include <algorithm>
#include <cmath>

#include "costmodel/flops.h"
#include "costmodel/mtp.h"

namespace meshplan {

namespace {
// `layers` over `parts` as evenly as possible, the extra ones to the middle parts.
std::vector<int> spread(int64_t layers, int parts) {
  std::vector<int> out(static_cast<size_t>(parts), static_cast<int>(layers / parts));
  const int extra = static_cast<int>(layers % parts);
  const int start = (parts - extra) / 2;
  for (int i = 0; i < extra; ++i) out[static_cast<size_t>(start + i)] += 1;
  return out;
}
}  // namespace

std::vector<int> balanced_layers_per_chunk(const Problem& p, int pp, int virtual_stages) {
  const int v = std::max(1, virtual_stages);
  const int64_t L = p.model.num_layers;
  if (pp < 2 || static_cast<int64_t>(pp) * v > L) return {};
  const double seq = static_cast<double>(p.job.seq_len);
  const double layer = layer_forward_flops(p.model, 1.0, seq).total();
  if (!(layer > 0.0)) return {};
  const double head = logits_forward_flops(p.model, 1.0, seq) + mtp_forward_flops(p.model, 1.0, seq, layer);
  const double x = head / layer;  // the last chunk's extra work, in layers
  const double per_rank = (static_cast<double>(L) + x) / pp;
  // The last rank: at least one layer per chunk, and enough left for one per chunk elsewhere.
  const int64_t last = std::clamp<int64_t>(std::llround(per_rank - x), v, L - static_cast<int64_t>(pp - 1) * v);
  std::vector<int> ranks = spread(L - last, pp - 1);
  ranks.push_back(static_cast<int>(last));
  std::vector<int> chunks(static_cast<size_t>(pp) * v, 0);
  for (int r = 0; r < pp; ++r) {
    // Inside a rank the chunks differ by one at most; the earlier ones take the extra layers, so the
    // head's chunk (the last rank's last) holds the fewer.
    const int n = ranks[static_cast<size_t>(r)];
    for (int k = 0; k < v; ++k) chunks[static_cast<size_t>(k) * pp + r] = n / v + (k < n % v ? 1 : 0);
  }
  // Only a split that lowers the busiest rank's work is worth a candidate of its own.
  ParallelConfig even;
  even.pp = pp;
  even.virtual_stages = v;
  auto busiest = [&](const std::vector<int>& split) {
    std::vector<double> load(static_cast<size_t>(pp), 0.0);
    for (size_t c = 0; c < split.size(); ++c) load[c % static_cast<size_t>(pp)] += split[c];
    load.back() += x;
    return *std::max_element(load.begin(), load.end());
  };
  if (!(busiest(chunks) < busiest(layers_per_chunk(p.model, even)))) return {};
  return chunks;
}

std::vector<int> embedding_loss_layers_per_chunk(const ModelSpec& m, int pp, int virtual_stages) {
  const int64_t chunks = static_cast<int64_t>(pp) * std::max(1, virtual_stages);
  const int64_t slots = m.num_layers + 2;
  if (pp < 2 || m.num_layers < 1 || slots % chunks != 0) return {};
  std::vector<int> split(static_cast<size_t>(chunks), static_cast<int>(slots / chunks));
  split.front() -= 1;  // the embedding's slot
  split.back() -= 1;   // the loss's slot
  ParallelConfig even;
  even.pp = pp;
  even.virtual_stages = std::max(1, virtual_stages);
  if (chunks <= m.num_layers && split == layers_per_chunk(m, even)) return {};
  return split;
}

}  // namespace meshplan
