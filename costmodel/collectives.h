// Alpha-beta collective costs (ring/tree all-reduce, reduce-scatter, all-gather, p2p, all-to-all),
// placement-aware: which link a process group uses depends on how its ranks sit on nodes.
#pragma once
#include "core/hardware_profile.h"

namespace meshplan {

enum class Collective { AllReduceRing, AllReduceTree, ReduceScatter, AllGather, PointToPoint, AllToAll };

const char* to_string(Collective c);

/// nccl-tests PERFORMANCE.md: busbw = algbw * factor. All-reduce 2(n-1)/n, reduce-scatter,
/// all-gather and all-to-all (n-1)/n, point-to-point 1. Tree all-reduce is given the ring factor
/// too (nccl-tests reports both algorithms with the same factor; the difference is in latency).
double bus_bandwidth_factor(Collective c, int n);

/// Time of one collective over `n` ranks on one kind of link. `bytes` is the nccl-tests "size":
/// the full buffer (all-reduce input, all-gather output, reduce-scatter input, p2p message, the
/// all-to-all send buffer of one rank). Cost = steps * latency + factor * bytes / (bw * efficiency),
/// with steps = 2(n-1) for ring all-reduce, 2*ceil(log2 n) for tree all-reduce, n-1 for
/// reduce-scatter/all-gather/all-to-all, 1 for point-to-point. n <= 1 costs nothing.
double collective_time_s(Collective c, double bytes, int n, const LinkSpec& link);

/// How the ranks of a process group sit on NVLink domains (hw.nvlink_domain(): the node on HGX,
/// the rack on GB200 NVL72); "node" below means that domain. Ranks are numbered node by node; a group of
/// `size` ranks whose members are `stride` ranks apart (Megatron order tp-dp-pp: TP stride 1,
/// DP stride tp, PP stride tp*dp).
struct GroupPlacement {
  int size = 1;           // ranks in the group
  int per_node = 1;       // members of the group inside one node
  int nodes = 1;          // nodes the group spans
  bool spans_nodes() const { return nodes > 1; }
};

GroupPlacement place_group(const HardwareProfile& hw, int size, int stride);

/// Placement-aware costs. Inside one node: intra_node link. Across nodes with one member per node:
/// inter_node link. Across nodes with k > 1 members per node: hierarchical (NCCL-style) —
/// all-reduce = intra reduce-scatter (k) + inter all-reduce of bytes/k (nodes) + intra all-gather (k);
/// reduce-scatter / all-gather = the intra and inter halves of that.
double all_reduce_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes);
double reduce_scatter_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes);
double all_gather_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes);
/// One message between neighbouring ranks of group `g` (pipeline stages): inter_node when the
/// group spans nodes (its critical path crosses a node boundary), intra_node otherwise.
double p2p_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes);

}  // namespace meshplan
