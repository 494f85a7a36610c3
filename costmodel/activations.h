// Activation memory after Korthikanti et al. 2022 (arXiv:2205.05198), generalised to GQA and SwiGLU.
#pragma once
#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Bytes of one transformer layer's stashed activations for one micro-batch of `micro_batch`
/// sequences of `seq` tokens on one GPU (16-bit activations, 1-byte dropout masks).
/// With s = seq, b = micro_batch, h = hidden, kv = K/V width, f = MLP width, a = heads, t = tp:
///   replicated part  R = 10 s b h          (2 norm inputs 4, 2 dropout masks 2, QKV input 2, MLP input 2)
///   TP-split part    S = s b (4h + 4kv) + s b f * (gated ? 6 : 4)   (Q, K, V, out-proj input; MLP)
///   attention core   A = 5 a s^2 b         (softmax out 2, dropout mask 1, dropout out 2)
///   none:      R + S/t + A/t       (SP: (R + S + A)/t)
///   selective: R + S/t             (SP: (R + S)/t)        attention core recomputed
///   full:      2 s b h             (SP: 2 s b h / t)      only the layer input
/// For MHA (kv = h), plain MLP with f = 4h: R + S = 34 s b h, Korthikanti's closed forms.
double layer_activation_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp,
                              Recompute r);

/// Working set of the one layer being recomputed during backward (on top of the stash): the
/// layer's no-recompute activations for full recompute, its attention core for selective.
double recompute_working_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp,
                               Recompute r);

/// First stage, per micro-batch in flight: the embedding output dropout mask, s b h (/t with SP).
double embedding_activation_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp);

/// Last stage, one micro-batch: final norm input and LM head input 4 s b h (/t with SP) plus the
/// fp32 logits for the cross entropy 4 s b V / t (vocab-parallel).
double head_activation_bytes(const ModelSpec& m, double micro_batch, double seq, int tp, bool sp);

/// Micro-batches whose activations pipeline rank `stage` holds at its peak, in units of
/// "one micro-batch through all of this rank's layers":
///   GPipe M;  1F1B and ZB-H1 min(M, P - stage);
///   interleaved (Megatron): min(v M, 2 (P - stage - 1) + (v - 1) P + 1) chunk-micro-batches of
///   L/(P v) layers each, i.e. that count divided by v (stage 0: (1 + (P-1)/(P v)) P).
double microbatches_in_flight(ScheduleKind s, int pp, int v, int64_t num_micro_batches, int stage);

}  // namespace meshplan
