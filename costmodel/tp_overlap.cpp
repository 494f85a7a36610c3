// TP communication overlapped with its GEMMs (Megatron --tp-comm-overlap), costmodel/tp_overlap.h.
#include "costmodel/tp_overlap.h"

#include <algorithm>

#include "costmodel/flops.h"

namespace meshplan {

LayerGemmTimes layer_gemm_times(const Problem& p, const ParallelConfig& cfg) {
  const double peak = job_peak_flops(p);
  const double t = static_cast<double>(cfg.tp);
  const LayerFlops f = layer_forward_flops(p.model, static_cast<double>(cfg.micro_batch_size),
                                           static_cast<double>(p.job.seq_len));
  LayerGemmTimes g;
  g.qkv_s = gemm_time_s(p.hardware, peak, f.qkv / t);
  g.out_s = gemm_time_s(p.hardware, peak, f.out_proj / t);
  g.up_s = gemm_time_s(p.hardware, peak, f.mlp_up / t);
  g.down_s = gemm_time_s(p.hardware, peak, f.mlp_down / t);
  return g;
}

LayerComm overlapped_tp_comm(const LayerGemmTimes& g, double ag, double rs) {
  auto over = [](double comm, double gemm) { return std::max(0.0, comm - gemm); };
  LayerComm out;
  out.collective_s = ag + rs;
  out.forward_s = over(ag, g.qkv_s) + over(rs, g.out_s) + over(ag, g.up_s) + over(rs, g.down_s);
  out.backward_s = over(ag, g.out_s) + over(ag, g.down_s) + over(rs, g.qkv_s) + over(rs, g.up_s) +
                   over(2.0 * ag, g.qkv_s + g.up_s);
  const double all = 2.0 * (2.0 * ag + 2.0 * rs) + 2.0 * ag;
  out.hidden_s = all - out.forward_s - out.backward_s;
  return out;
}

}  // namespace meshplan
