// Element-wise HBM traffic of meshplan's own executor (`meshplan run`): fp32 activations, one kernel
// per op, and the bf16 copies around cuDNN's attention on the CUDA backend.
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
EagerBytes executor_op_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, bool bf16_attention_copies);

}  // namespace meshplan
