// HBM traffic of the loss: the cross entropy over the LM head's logits, per kernel the framework runs.
#pragma once
#include "core/framework_knobs.h"

namespace meshplan {

/// Bytes moved per logit element (one of T * V / tp on each GPU) by the cross entropy, forward and
/// backward, counted from the code each kind runs (bf16 logits in, fp32 math):
///   Unfused (Megatron-Core's default, vocab_parallel_cross_entropy in
///   megatron/core/tensor_parallel/cross_entropy.py; Megatron-LM's --cross-entropy-loss-fusion is off by
///   default): forward logits.float() (read 2, write 4), max (read 4), in-place "-= max" (8),
///   torch.exp(out=) (8), sum (4), softmax div_ (8) = 38; the fp32 softmax is saved; backward
///   grad_input.mul_(grad_output) (8) and the cast of the gradient back to bf16 (read 4, write 2) = 14.
///   Fused (the same algorithm under jit_fuser, megatron/core/fusions/fused_cross_entropy.py; NeMo 2.0's
///   GPTConfig turns cross_entropy_loss_fusion on): cast + max in one kernel writing the fp32 logits (6),
///   subtract + exp + sum (8), div_ (8) = 22 forward; backward as Unfused, 14.
///   Generic (any other framework; not counted from one code base): six 4-byte passes, 12 + 12.
///   TorchFp32 (torchtitan train.py at 9dec370ad, cross_entropy_loss: F.cross_entropy(pred.flatten(0, 1)
///   .float(), labels)): .float() (read 2, write 4), log_softmax (read 4, write 4; its max and sum passes
///   re-read a 128k-wide fp32 row of 0.5 MB from L2, not HBM), nll_loss (gathers one element per row)
///   = 14 forward; backward nll_loss_backward (zero-fill 4, scatter), log_softmax_backward (read the
///   gradient and the saved output, write: 12), the cast back to bf16 (read 4, write 2) = 22.
///   TeInplace (Transformer Engine's Triton kernels, transformer_engine/pytorch/triton/cross_entropy.py,
///   TE 2.2 to 2.17, run by Megatron-Core's cross_entropy_fusion_impl "te", which Megatron-Bridge's
///   performance scripts set): online_softmax_kernel reads the row once for max and sum (2),
///   cross_entropy_kernel reads it again and writes the gradient over the bf16 logits in place (2 + 2)
///   = 6 forward; backward element_mul_kernel scales that gradient in place by the per-token loss
///   gradient (read 2, write 2; Megatron passes reduce_loss False, so the multiply always runs) = 4.
///   Te (the same from TE 2.18, commit 01bbe3eea "Fix the numerical issue with the Fused CE loss"): the
///   gradient goes to a new fp32 buffer, 2 + 2 + 4 = 8 forward; backward element_mul in place on fp32
///   (8) and autograd's cast of the fp32 gradient to the bf16 logits' dtype (read 4, write 2) = 14.
///   FlashXentropy (flash-attn's CrossEntropyLoss, llm-foundry's loss_fn "fused_crossentropy"): from 2.x the
///   Triton kernels of flash_attn/ops/triton/cross_entropy.py (v2.4.2): the forward loads each row once,
///   one block of next_power_of_2(V) <= 64k columns, and writes only the fp32 loss and log-sum-exp per row
///   (2); the backward loads the row again and writes the gradient to a new tensor of the logits' dtype
///   (inplace_backward False: 2 + 2) = 4. The 1.0.x CUDA kernel (csrc/xentropy, apex's softmax_xentropy,
///   run through xentropy_cuda_lib) moves the same: its max and sum passes re-read a row of V bf16 values
///   (100 KB at V = 50368) from L2.
struct CrossEntropyBytes {
  double forward = 0;   // bytes per logit element
  double backward = 0;  // bytes per logit element
};
CrossEntropyBytes cross_entropy_bytes_per_logit(CrossEntropyKernel k);

/// Bytes per logit element of `passes` train-metric cross entropies (FrameworkKnobs::
/// train_metric_cross_entropies), forward only, no gradient: Composer's LanguageCrossEntropy.update runs
/// torch.nn.CrossEntropyLoss(reduction="sum") on the micro-batch's cached bf16 logits inside the trainer's
/// autocast context (composer/metrics/nlp.py, v0.17.2), and autocast runs cross_entropy in fp32 (PyTorch
/// 2.1 docs, amp.rst "CUDA Ops that can autocast to float32"): the cast (read 2, write 4), log_softmax
/// (read 4, write 4; its max and sum passes re-read the row from L2), nll_loss (one element per row) =
/// 14 per pass, as TorchFp32's forward. LanguagePerplexity subclasses it and computes the same again.
double train_metric_bytes_per_logit(int passes);

}  // namespace meshplan
