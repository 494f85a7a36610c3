// Element-wise HBM traffic that torchtitan's Llama block adds when it runs eager (no torch.compile):
// RMSNorm and the SwiGLU product as one PyTorch kernel per op, per layer and micro-batch.
#pragma once
#include "core/model_spec.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// Extra bytes (reads + writes) one layer moves on one GPU, forward and backward, when torchtitan's
/// Llama block runs eager, over what costmodel/compute_time.cpp charges for the same ops fused (the
/// kernels torch.compile / inductor generates: 4 T h per norm and 6 T f for SiLU(a) * c forward,
/// twice that backward). Sources: pytorch/torchtitan 9dec370ad torchtitan/models/norms.py RMSNorm
/// (forward: `self._norm(x.float()).type_as(x) * self.weight`, _norm = x * rsqrt(x.pow(2).mean(-1) +
/// eps)) and torchtitan/models/llama/model.py FeedForward (`w2(F.silu(w1(x)) * w3(x))`); autograd's
/// backward of each op from pytorch/pytorch torch/csrc/autograd/FunctionsManual.cpp (002ca6715:
/// pow_backward = grad * (2 * self.pow(1)), mean_backward = grad.expand(...) / n,
/// mul_tensor_backward = grad * other) and aten/src/ATen/native/Pow.cpp (pow(x, 1) is a copy_).
/// x is (T, h) with T = b s tokens (T/t under SP), e bytes per 16-bit element, fp32 4 bytes; per-row
/// (T) and per-column (h) vectors are left out. One eager RMSNorm:
///   forward  x.float() e+4, pow 8, mean 4, * rsqrt 8, type_as 4+e, * weight 2e  = (28 + 4e) T h
///   backward * weight: dx 2e, dw 3e + sum e; type_as 4+e; * rsqrt: dx 8, d(rsqrt) 12 + sum 4;
///            mean 4 (the expanded gradient written); pow: copy 8, * 2 8, * grad 12; the two
///            gradients of x.float() added 12; float() 4+e                           = (76 + 8e) T h
///   extra over the fused norm (2e T h forward, 4e backward): (28 + 2e) and (76 + 4e) T h.
/// SwiGLU on (T, f/t): silu 2e + mul 3e forward; mul backward 2 x 3e, silu_backward 3e:
///   extra over the fused 3e / 6e: 2e T f/t forward, 3e T f/t backward (a plain MLP has no chain: 0).
/// Not counted: the rotary embedding (inductor has no complex code generation, so the compiled block
/// runs its complex multiply as the same ATen kernel: torchtitan issue #15), residual adds (one op
/// each either way) and the final norm (outside the compiled blocks at 9dec370ad: apply_compile
/// wraps each TransformerBlock). `fused_norm`: norm_type fused_rmsnorm, norms add nothing.
/// Llama 3 8B, b 2, s 8192, bf16, tp 1: 2 (32) T h + 4 T f = 5.2 GB forward, 2 (84) T h + 6 T f
/// = 12.7 GB backward per layer.
EagerBytes eager_llama_op_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, double element_bytes,
                                bool fused_norm);

}  // namespace meshplan
