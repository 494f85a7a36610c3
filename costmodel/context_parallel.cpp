// Context-parallel attention: ring (p2p), all-gather and all-to-all K/V exchange, overlap with compute.
#include "costmodel/fp8_attention.h"
#include "costmodel/context_parallel.h"

#include <algorithm>

#include "costmodel/cp_torch_allgather.h"

namespace meshplan {

double cp_local_seq(const Problem& p, const ParallelConfig& cfg) {
  return static_cast<double>(p.job.seq_len) / std::max(1, cfg.cp);
}

int grad_group_size(const ParallelConfig& cfg) { return cfg.dp * std::max(1, cfg.cp); }

GroupPlacement cp_group(const HardwareProfile& hw, const ParallelConfig& cfg) {
  return place_group(hw, std::max(1, cfg.cp), cfg.tp);
}

GroupPlacement grad_group(const HardwareProfile& hw, const ParallelConfig& cfg) {
  return place_group(hw, grad_group_size(cfg), cfg.tp);
}

int pp_group_stride(const ParallelConfig& cfg) { return cfg.tp * std::max(1, cfg.cp) * cfg.dp; }

namespace {
// All-to-all over the CP group: the inter-node link once the group leaves the NVLink domain.
double cp_all_to_all_s(const HardwareProfile& hw, const GroupPlacement& g, double bytes) {
  return collective_time_s(Collective::AllToAll, bytes, g.size, g.spans_nodes() ? hw.inter_node : hw.intra_node);
}
}  // namespace

CpAttention cp_ring_compute(const Problem& p, const ParallelConfig& cfg, double peak, double e) {
  const int cp = std::max(1, cfg.cp);
  CpAttention out;
  out.steps = cp;
  out.step = attention_core_time(p.hardware, peak, p.model, p.job.knobs.attention,
                                 static_cast<double>(cfg.micro_batch_size), cp_local_seq(p, cfg), cfg.tp, e,
                                 p.job.knobs.fused_kernel, false, fp8_attention_dtype(p.job));
  out.core.forward_s = cp * out.step.forward_s;
  out.core.backward_s = cp * out.step.backward_s;
  out.core.forward_elementwise_s = cp * out.step.forward_elementwise_s;
  return out;
}

CpAttention cp_attention(const Problem& p, const ParallelConfig& cfg, double peak, double e) {
  if (p.job.cp_comm == CpComm::TorchAllGather) return torch_all_gather_attention(p, cfg, peak, e);
  const HardwareProfile& hw = p.hardware;
  const ModelSpec& m = p.model;
  const int cp = std::max(1, cfg.cp);
  const double b = static_cast<double>(cfg.micro_batch_size);
  const double s_local = cp_local_seq(p, cfg);
  const double t = static_cast<double>(cfg.tp);
  const AttentionKind kind = p.job.knobs.attention;
  const GroupPlacement g = cp_group(hw, cfg);
  CpAttention out;
  out.kv_chunk_bytes = 2.0 * e * b * s_local * static_cast<double>(m.kv_dim()) / t;
  if (p.job.cp_comm == CpComm::AllToAll) {
    // Ulysses attends over the whole sequence (heads scattered): a sliding window applies as without CP.
    out.step = attention_core_time(hw, peak, m, kind, b, static_cast<double>(p.job.seq_len), cfg.tp * cp, e,
                                   p.job.knobs.fused_kernel, true, fp8_attention_dtype(p.job));
    out.core = out.step;
    const double q_bytes = e * b * s_local * static_cast<double>(m.q_dim()) / t;  // Q, O and dO alike
    const double qkv = cp_all_to_all_s(hw, g, q_bytes + out.kv_chunk_bytes);
    const double o = cp_all_to_all_s(hw, g, q_bytes);
    out.step_comm_forward_s = qkv + o;
    out.step_comm_backward_s = o + qkv;
    out.forward_exposed_s = out.step_comm_forward_s;
    out.backward_exposed_s = out.step_comm_backward_s;
    return out;
  }
  const CpAttention ring = cp_ring_compute(p, cfg, peak, e);
  out.steps = ring.steps;
  out.step = ring.step;
  out.core = ring.core;
  if (p.job.cp_comm == CpComm::AllGather) {
    const double gathered = cp * out.kv_chunk_bytes;  // nccl-tests size: the all-gather output
    out.step_comm_forward_s = all_gather_s(hw, g, gathered);
    out.step_comm_backward_s = all_gather_s(hw, g, gathered) + reduce_scatter_s(hw, g, gathered);
    out.forward_exposed_s = out.step_comm_forward_s;
    out.backward_exposed_s = out.step_comm_backward_s;
    return out;
  }
  const double hop = p2p_s(hw, g, out.kv_chunk_bytes);
  out.step_comm_forward_s = hop;
  out.step_comm_backward_s = 2.0 * hop;  // K/V onward and the accumulated dK/dV alongside
  out.forward_exposed_s = (cp - 1) * std::max(0.0, hop - out.step.forward_s);
  out.backward_exposed_s = (cp - 1) * std::max(0.0, 2.0 * hop - out.step.backward_s) + hop;
  return out;
}

}  // namespace meshplan
