// Activation memory after Korthikanti et al. 2022 (arXiv:2205.05198), generalised to GQA and SwiGLU.
#pragma once
#include <string>

#include "core/framework_knobs.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Bytes of one stashed activation element for the job's compute dtype (Job::dtype): 4 for "fp32"
/// and "tf32" (tensors stored as fp32), 2 otherwise ("bf16", "fp16"; "fp8" too: FP8 recipes keep
/// the residual stream, norms and softmax in 16 bits and only cast GEMM inputs, so 2 bytes per
/// element is the conservative count).
double activation_element_bytes(const std::string& dtype);

/// Bytes of one transformer layer's stashed activations for one micro-batch of `micro_batch`
/// sequences of `seq` tokens on one GPU, with activations of `e` = `element_bytes` bytes and
/// 1-byte dropout masks when `m.dropout` (drop = 1, else 0).
/// With s = seq, b = micro_batch, h = hidden, kv = K/V width, f = MLP width, a = heads, t = tp:
///   replicated part  R = (4e + 2 drop) s b h   (2 norm inputs, QKV input, MLP input; 2 dropout masks)
///   TP-split part    S = e s b (2h + 2kv) + e s b f * (gated ? 3 : 2)   (Q, K, V, out-proj input; MLP)
///   attention core   A = (drop ? 2e + 1 : e) a s^2 b   (materialized: softmax out; its dropout mask
///                                                     and output), 4 a s b (fused: fp32 log-sum-exp,
///                                                     costmodel/attention.h)
///   none:      R + S/t + A/t       (SP: (R + S + A)/t)
///   selective: R + S/t             (SP: (R + S)/t)        attention core recomputed
///   full:      e s b h             (SP: e s b h / t)      only the layer input
/// For e = 2 with dropout: R = 10 sbh, A = 5 as^2 b, and for MHA (kv = h) with a plain MLP of
/// f = 4h, R + S = 34 s b h: Korthikanti's closed forms.
/// Multi-head latent attention (DeepSeek-V2/V3) keeps its own tensors in place of Q, K, V and the
/// out-projection input: S's attention terms become e s b (a (2 qk + 2 v)) and e s b 2(q_lora + kv_lora)
/// is added unsplit in none and selective (costmodel/mla_stash.h).
double layer_activation_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp,
                              Recompute r, double element_bytes = 2.0,
                              AttentionKind attention = AttentionKind::Materialized);

/// Working set of the one layer being recomputed during backward (on top of the stash): the
/// layer's no-recompute activations for full recompute, its attention core for selective.
double recompute_working_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp,
                               Recompute r, double element_bytes = 2.0,
                               AttentionKind attention = AttentionKind::Materialized);

/// First stage, per micro-batch in flight: the embedding output dropout mask, s b h (/t with SP);
/// 0 for a model without dropout.
double embedding_activation_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp);

/// Last stage, one micro-batch: final norm input and LM head input 2e s b h (/t with SP) plus the
/// fp32 logits for the cross entropy 4 s b V / t (vocab-parallel) -- unless meshplan's loss splits
/// them into vocabulary chunks (`loss_chunk_bytes` > 0 and more than one chunk, core/loss_chunk.h):
/// then no logits stay with the micro-batch (loss_chunk_working_bytes holds the one chunk alive).
double head_activation_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp,
                             double element_bytes = 2.0, uint64_t loss_chunk_bytes = 0);

/// The one chunk of fp32 logits alive at a time under a chunked loss, 4 s b Vc, once per last stage
/// whatever the schedule; 0 when the logits are one chunk (kept in head_activation_bytes).
double loss_chunk_working_bytes(const ModelSpec& m, double micro_batch, double seq, int tp,
                                uint64_t loss_chunk_bytes);

/// Micro-batches whose activations pipeline rank `stage` holds at its peak, in units of
/// "one micro-batch through all of this rank's layers":
///   GPipe M;  1F1B and ZB-H1 min(M, P - stage);
///   interleaved (Megatron): min(v M, 2 (P - stage - 1) + (v - 1) P + 1) chunk-micro-batches of
///   L/(P v) layers each, i.e. that count divided by v (stage 0: (1 + (P-1)/(P v)) P);
///   DualPipeV (torch.distributed.pipelining's order, each stash kept until its W): 2P + 1
///   chunk-micro-batches on every rank, 2P - stage of the first chunk and stage + 1 of the second,
///   i.e. (2P + 1) / 2 (the DualPipe README's "PP+1" activations of PP = 2P stages); costed with
///   equal chunks.
double microbatches_in_flight(ScheduleKind s, int pp, int v, int64_t num_micro_batches, int stage);

/// Micro-batches of the first model chunk in flight on rank 0 (the embedding's activations):
/// microbatches_in_flight, except DualPipeV's min(M, 2P) forwards of its first chunk.
double first_chunk_in_flight(ScheduleKind s, int pp, int v, int64_t num_micro_batches);

}  // namespace meshplan
