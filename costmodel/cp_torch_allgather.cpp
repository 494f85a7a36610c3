// PyTorch context_parallel's all-gather exchange (costmodel/cp_torch_allgather.h says what each term is).
#include "costmodel/cp_torch_allgather.h"

#include <algorithm>

#include "costmodel/compute_time.h"

namespace meshplan {

EagerBytes torch_cp_merge_bytes(int cp, double E, double e) {
  const double steps = static_cast<double>(std::max(1, cp));
  const double forward = 2.0 * (e + 4.0) + (steps - 1.0) * (36.0 + 5.0 * e);
  const double backward = 12.0 + (16.0 + 2.0 * e) + (4.0 + e) + 12.0 + (steps - 1.0) * (24.0 + 5.0 * e) +
                          steps * (24.0 + e);
  return EagerBytes{forward * E, backward * E};
}

CpAttention torch_all_gather_attention(const Problem& p, const ParallelConfig& cfg, double peak, double e) {
  const HardwareProfile& hw = p.hardware;
  const ModelSpec& m = p.model;
  const int cp = std::max(1, cfg.cp);
  const double b = static_cast<double>(cfg.micro_batch_size);
  const double L = cp_local_seq(p, cfg);
  const double q_width = static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim()) / cfg.tp;
  const GroupPlacement g = cp_group(hw, cfg);
  CpAttention out = cp_ring_compute(p, cfg, peak, e);  // cp half-blocks, as the p2p ring
  const EagerBytes merge = torch_cp_merge_bytes(cp, b * L * q_width, e);
  out.core.forward_s += memory_bound_time_s(hw, merge.forward);
  out.core.backward_s += memory_bound_time_s(hw, merge.backward);
  out.kv_chunk_bytes = 2.0 * e * b * L * q_width;             // K and V, expanded to the query heads
  const double gather = all_gather_s(hw, g, cp * out.kv_chunk_bytes);  // nccl-tests size: the output
  const double dkv_send = p2p_s(hw, g, 2.0 * 4.0 * b * L * q_width);  // fp32 dK and dV
  out.step_comm_forward_s = gather;
  out.step_comm_backward_s = gather + dkv_send;
  out.forward_exposed_s = std::max(0.0, gather - out.step.forward_s);
  out.backward_exposed_s = std::max(0.0, gather - out.step.backward_s) +
                           (cp - 1) * std::max(0.0, dkv_send - out.step.backward_s) + dkv_send;
  return out;
}

}  // namespace meshplan
