// Multi-token prediction's parameters, time and activations on the last chunk (costmodel/mtp.h).
#include "costmodel/mtp.h"

#include <algorithm>

#include "core/pipeline_placement.h"
#include "costmodel/activations.h"
#include "costmodel/context_parallel.h"

namespace meshplan {

int chunk_mtp_layers(const ModelSpec& m, const ParallelConfig& cfg, int chunk) {
  const int last = cfg.pp * std::max(1, cfg.virtual_stages) - 1;
  return chunk == last ? static_cast<int>(m.mtp_layers) : 0;
}

int stage_mtp_layers(const ModelSpec& m, const ParallelConfig& cfg, int stage) {
  return stage == last_chunk_rank(cfg) ? static_cast<int>(m.mtp_layers) : 0;  // the rank of the last chunk
}

// One module's norms: enorm, hnorm and final_layernorm, each like one of the layer's norms.
static double module_norm_parameters(const ModelSpec& m) {
  return 3.0 * m.layer_norm_parameters() / static_cast<double>(std::max<int64_t>(1, m.norms_per_layer));
}

static double routed_parameters_of_mtp_layer(const ModelSpec& m) {
  return m.num_moe_layers() > 0 ? static_cast<double>(m.moe.num_experts) * m.expert_parameters() : 0.0;
}

double mtp_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage) {
  const int n = stage_mtp_layers(m, cfg, stage);
  if (n == 0) return 0.0;
  const double h = static_cast<double>(m.hidden_size), t = static_cast<double>(cfg.tp);
  const double norms = m.layer_norm_parameters();
  const double layer = (m.mtp_layer_parameters() - routed_parameters_of_mtp_layer(m) - norms) / t + norms;
  const double module = layer + 2.0 * h * h / t + module_norm_parameters(m);
  const double embedding_copy = cfg.pp > 1 ? static_cast<double>(m.vocab_size) * h / t : 0.0;
  return n * module + embedding_copy;
}

double mtp_expert_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage) {
  const int n = stage_mtp_layers(m, cfg, stage);
  if (n == 0 || !m.moe.enabled()) return 0.0;
  return n * routed_parameters_of_mtp_layer(m) / (static_cast<double>(cfg.ep) * cfg.etp);
}

MtpTimes mtp_times(const Problem& p, const ParallelConfig& cfg, const EndsCompute& ends) {
  MtpTimes out;
  const double n = static_cast<double>(p.model.mtp_layers);
  if (n <= 0) return out;
  const HardwareProfile& hw = p.hardware;
  const double T = static_cast<double>(cfg.micro_batch_size) * cp_local_seq(p, cfg);  // tokens, [T, h]
  const double h = static_cast<double>(p.model.hidden_size), t = static_cast<double>(cfg.tp);
  // enorm, hnorm and the concatenation, 8 bytes per element of h each way (bf16 in and out, fp32 math):
  // the rows are TP-replicated unless sequence parallelism splits them.
  const double norm_bytes = 3.0 * 8.0 * T * h / (cfg.sequence_parallel ? t : 1.0);
  const double proj = gemm_time_s(hw, job_peak_flops(p), 2.0 * T * 2.0 * h * h / t);  // eh_proj, one pass
  out.tp_comm_forward_s = n * ends.head_tp_comm_forward_s;
  out.tp_comm_backward_s = n * ends.head_tp_comm_backward_s;
  out.forward_s = n * (ends.embedding_forward_s + memory_bound_time_s(hw, norm_bytes) + proj + ends.head_forward_s) +
                  out.tp_comm_forward_s;
  out.backward_input_s = n * (ends.embedding_backward_s + memory_bound_time_s(hw, 2.0 * norm_bytes) + proj +
                              ends.head_backward_input_s) +
                         out.tp_comm_backward_s;
  out.backward_weight_s = n * (proj + ends.head_backward_weight_s);
  return out;
}

double mtp_extra_activation_bytes(const Problem& p, const ParallelConfig& cfg) {
  const double n = static_cast<double>(p.model.mtp_layers);
  if (n <= 0) return 0.0;
  const double b = static_cast<double>(cfg.micro_batch_size), s = cp_local_seq(p, cfg);
  const double e = activation_element_bytes(p.job.dtype);
  const double h = static_cast<double>(p.model.hidden_size);
  const double split = cfg.sequence_parallel ? static_cast<double>(cfg.tp) : 1.0;
  const double inputs = 4.0 * e * b * s * h / split;  // enorm and hnorm inputs, eh_proj's 2h-wide input
  return n * (inputs + head_activation_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel, e,
                                             p.job.knobs.loss_chunk_bytes));
}

double mtp_forward_flops(const ModelSpec& m, double sequences, double seq, double layer_forward_flops) {
  if (m.mtp_layers <= 0) return 0.0;
  const double T = sequences * seq, h = static_cast<double>(m.hidden_size), V = static_cast<double>(m.vocab_size);
  return static_cast<double>(m.mtp_layers) * (layer_forward_flops + 2.0 * T * 2.0 * h * h + 2.0 * T * h * V);
}

}  // namespace meshplan
