// Alpha-beta collective costs and group placement (formulas in costmodel/README.md "Collectives").
#include "costmodel/collectives.h"

#include <algorithm>
#include <cmath>

namespace meshplan {

const char* to_string(Collective c) {
  switch (c) {
    case Collective::AllReduceRing: return "all_reduce_ring";
    case Collective::AllReduceTree: return "all_reduce_tree";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllGather: return "all_gather";
    case Collective::PointToPoint: return "p2p";
    case Collective::AllToAll: return "all_to_all";
  }
  return "?";
}

double bus_bandwidth_factor(Collective c, int n) {
  if (n <= 1) return 0.0;
  const double nd = static_cast<double>(n);
  switch (c) {
    case Collective::AllReduceRing:
    case Collective::AllReduceTree: return 2.0 * (nd - 1.0) / nd;
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll: return (nd - 1.0) / nd;
    case Collective::PointToPoint: return 1.0;
  }
  return 0.0;
}

static double latency_steps(Collective c, int n) {
  switch (c) {
    case Collective::AllReduceRing: return 2.0 * (n - 1);
    case Collective::AllReduceTree: return 2.0 * std::ceil(std::log2(static_cast<double>(n)));
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll: return static_cast<double>(n - 1);
    case Collective::PointToPoint: return 1.0;
  }
  return 0.0;
}

double collective_time_s(Collective c, double bytes, int n, const LinkSpec& link) {
  if (n <= 1 || bytes <= 0.0) return 0.0;
  const double busbw = link.bandwidth_bytes_per_s * link.efficiency;
  return latency_steps(c, n) * link.latency_s + bus_bandwidth_factor(c, n) * bytes / busbw;
}

GroupPlacement place_group(const HardwareProfile& hw, int size, int stride) {
  GroupPlacement g;
  g.size = std::max(1, size);
  // A "node" here is an NVLink domain: the GPUs the intra_node link joins (8 on HGX, 72 on NVL72).
  const int gpn = std::max(1, hw.nvlink_domain());
  stride = std::max(1, stride);
  // Members one stride apart: a node of gpn consecutive ranks holds ceil(gpn / stride) of them.
  g.per_node = stride >= gpn ? 1 : std::min(g.size, (gpn + stride - 1) / stride);
  g.nodes = (g.size + g.per_node - 1) / g.per_node;
  return g;
}

double all_reduce_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes) {
  if (g.size <= 1) return 0.0;
  if (!g.spans_nodes()) return collective_time_s(Collective::AllReduceRing, bytes, g.size, hw.intra_node);
  if (g.per_node <= 1)
    return collective_time_s(Collective::AllReduceRing, bytes, g.size, hw.inter_node);
  const int k = g.per_node;
  return 2.0 * collective_time_s(Collective::ReduceScatter, bytes, k, hw.intra_node) +
         collective_time_s(Collective::AllReduceRing, bytes / k, g.nodes, hw.inter_node);
}

double reduce_scatter_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes) {
  if (g.size <= 1) return 0.0;
  if (!g.spans_nodes()) return collective_time_s(Collective::ReduceScatter, bytes, g.size, hw.intra_node);
  if (g.per_node <= 1)
    return collective_time_s(Collective::ReduceScatter, bytes, g.size, hw.inter_node);
  const int k = g.per_node;
  return collective_time_s(Collective::ReduceScatter, bytes, k, hw.intra_node) +
         collective_time_s(Collective::ReduceScatter, bytes / k, g.nodes, hw.inter_node);
}

double all_gather_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes) {
  // All-gather moves the same bytes as reduce-scatter in the opposite direction.
  return reduce_scatter_s(hw, g, bytes);
}

double p2p_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes) {
  if (g.size <= 1) return 0.0;
  return collective_time_s(Collective::PointToPoint, bytes, 2,
                           g.spans_nodes() ? hw.inter_node : hw.intra_node);
}

}  // namespace meshplan
