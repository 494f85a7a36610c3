// Multi-token prediction on the last pipeline chunk: its parameters, time and activations (DeepSeek-V3 sec. 2.2).
#pragma once
#include "core/parallel_config.h"
#include "costmodel/compute_time.h"

namespace meshplan {

/// MTP modules on chunk `chunk` / pipeline rank `stage`: all of the model's mtp_layers on the last chunk
/// (Megatron-Core without a custom pipeline layout puts "all MTP layers on the last pipeline stage",
/// multi_token_prediction.py mtp_on_this_rank / get_mtp_num_layers_to_build), 0 elsewhere.
int chunk_mtp_layers(const ModelSpec& m, const ParallelConfig& cfg, int chunk);
int stage_mtp_layers(const ModelSpec& m, const ParallelConfig& cfg, int stage);

/// Non-expert MTP parameters on one GPU of the last stage: per module the transformer layer's dense part
/// (TP-split, norms replicated), eh_proj 2h x h / t (ColumnParallelLinear) and three norms (enorm, hnorm,
/// final_layernorm); plus, when pp > 1, the copy of the word embedding V h / t the MTP stage builds
/// (gpt_model.py: `if self.pre_process or self.mtp_process: self.embedding = ...`). The LM head is the
/// main model's. Routed experts are in mtp_expert_parameters_per_gpu. 0 off the last stage.
double mtp_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage);
/// Routed-expert parameters of the MTP layers on one GPU of the last stage: per module a whole MoE layer's
/// E experts over ep x etp (the MTP layer is a MoE layer when the model has any). 0 elsewhere.
double mtp_expert_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage);

/// Time of the MTP modules' work outside their transformer layers, one micro-batch, all modules
/// (the layers themselves are costed as mtp_layers more layers of the last chunk). Per module and token:
/// the embedding lookup of the shifted tokens (EndsCompute's embedding terms), enorm + hnorm + the
/// concatenation (3 passes of 2h-wide rows, 8 bytes per element of h each way with the norms' fp32 reads),
/// eh_proj's GEMM of 2 T 2h h / t FLOPs (dX and dW backward), and the shared LM head's GEMM and loss again
/// (EndsCompute's head terms, with its TP collectives).
struct MtpTimes {
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  double tp_comm_forward_s = 0;   // inside forward_s
  double tp_comm_backward_s = 0;  // inside backward_input_s
};
MtpTimes mtp_times(const Problem& p, const ParallelConfig& cfg, const EndsCompute& ends);

/// Activation bytes the MTP modules add on the last stage for one micro-batch besides their layers'
/// stash (counted as layers): per module the embedding output and the hidden input of enorm/hnorm
/// (2 x e T h), eh_proj's 2h-wide input (2 e T h), and the head's stash again (head_activation_bytes).
double mtp_extra_activation_bytes(const Problem& p, const ParallelConfig& cfg);

/// Forward FLOPs of the MTP modules for `sequences` x `seq` tokens, given one layer's forward FLOPs:
/// per module that layer, eh_proj 2 T 2h h and the LM head 2 T h V.
double mtp_forward_flops(const ModelSpec& m, double sequences, double seq, double layer_forward_flops);

}  // namespace meshplan
