// Element-wise HBM traffic of meshplan's own executor (`meshplan run`): fp32 activations, one kernel
// per op, the bf16 copies around cuDNN's attention and of the GEMM operands on the CUDA backend.
#pragma once
#include "core/model_spec.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// Bytes (reads + writes) one layer's element-wise kernels move on one GPU per micro-batch, forward
/// and backward, counted from executor/model/{attention,mlp,layer}.cpp and the CUDA kernels they call
/// (fp32: 4 bytes per element; T = b s tokens, C hidden (T C / t under SP), Q = NH D / t,
/// K = NKV D / t, F = MLP width / t):
///   forward:  2 RMSNorms (read x, write out) 8C each, 2 residual adds (read 2, write 1) 12C each,
///             rotary in place on q and k 8(Q + K), SwiGLU (read gate and up, write act) 12F
///             = 40C + 8Q + 8K + 12F per token;
///   backward: 2 RMSNorm backwards (read dout and x, read and write the accumulated dx) 16C each,
///             SwiGLU backward (read dact, gate, up; write dgate, dup) 20F, rotary 8(Q + K)
///             = 32C + 8Q + 8K + 20F per token.
/// With cuDNN's attention (`bf16_attention_copies`) the fp32 tensors are copied to bf16 (read 4,
/// write 2) and back (read 2, write 4): q, k, v in and o out forward (12Q + 12K); q, k, v, o, dO in
/// and dq, dk, dv out backward (24Q + 24K). GEMM outputs are the GEMMs' own traffic; the per-row
/// rstd and lse vectors are left out. Not a framework's count: `run` sets FrameworkKnobs::
/// executor_ops to predict what it runs (cli/cmd_run.cpp). TinyLlama 1.1B, b 8, s 2048, with the
/// copies: 195.6 KB forward and 251.9 KB backward per token and layer.
/// With `bf16_attention_stash` (FrameworkKnobs::executor_bf16_attention_stash: q, k, v and o kept in
/// bf16, read and written by cuDNN as they are) only q, k, v in (forward: 6Q + 12K) and dO in, dq,
/// dk, dv out (backward: 12Q + 12K) are copied.
EagerBytes executor_op_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, bool bf16_attention_copies,
                             bool bf16_attention_stash = false);

/// Bytes of the bf16 copies the CUDA executor's `--cuda-gemm bf16-copy` makes of one layer's GEMM
/// operands per micro-batch (cuda_gemm.cpp: a kernel reads the fp32 operand, 4 bytes, and writes a
/// bf16 copy, 2 bytes), counted from the calls in executor/model/{attention,mlp}.cpp. GEMMs that
/// share an operand run in one operand-reuse scope (Backend::begin_gemm_operand_reuse), so each
/// distinct operand of a scope is copied once. Activation operands per token (C full: the
/// column-parallel GEMMs' input is the whole hidden row; Q, K, F per TP rank as above):
///   forward:  h1 once for q, k and v (C), the attention output (Q), h2 once for gate and up (C),
///             act (F) = 2C + Q + F;
///   backward: attention: dout (C) and att (Q) for wo's dX and dW; dq, dk, dv and h1 for the q/k/v
///             dX and dW GEMMs (Q + 2K + C); MLP: dout (C) and act (F), then dgate, dup and h2
///             (2F + C) = 4C + 2Q + 2K + 3F (a plain MLP: 2F instead of 3F);
/// and the layer's weights once forward and once backward (the dX GEMMs; the dW GEMMs read no
/// weight). TinyLlama 1.1B, b 8, s 2048: 249 KB per token and layer plus 2 x 264 MB of weights.
/// With `bf16_stash` (FrameworkKnobs::executor_bf16_gemm_stash: h1, h2 and act kept in bf16,
/// executor/model/gemm_stash.h) the backward reads them without a copy: 2C + F fewer per token
/// (TinyLlama 1.1B: 58 KB); under sequence parallelism (`sp`, tp > 1) h1 and h2 are row shards,
/// narrowed in forward and widened in backward (2C / t more each way) and only act is saved.
/// With `bf16_attention_stash` the attention output is read as it is by wo's GEMMs: Q fewer per
/// token forward and backward.
EagerBytes executor_gemm_copy_bytes(const ModelSpec& m, double b, double s, int tp, bool bf16_stash = false,
                                    bool sp = false, bool bf16_attention_stash = false);

/// The same copies around the LM head (executor/model/embed_head.cpp) with `loss_chunks` vocabulary
/// chunks (core/loss_chunk.h; V = vocabulary / tp, W = V x C weights):
///   one chunk:  forward  C tokens-row + W;  backward C + 2V + W (dlogits for dW and for dX);
///   k chunks:   forward  k C + W (the final hidden state once per chunk); backward 2k C + 2V + 2W
///               (each chunk's logits are recomputed before its dW and dX GEMMs).
EagerBytes executor_head_copy_bytes(const ModelSpec& m, double b, double s, int tp, int64_t loss_chunks);

}  // namespace meshplan
