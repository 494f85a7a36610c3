// Host kernels of context-parallel attention: one (query chunk, key/value chunk) block of causal
// GQA attention, merged into running online-softmax statistics, and the block's backward.
#pragma once
#include <cstdint>
#include <vector>

namespace meshplan::exec {

/// Shapes of one rank's part: q (B, Tl, NH, D), k and v (B, Tl, NKV, D); Tl = 2 * c tokens as
/// two chunks of c (local chunk 0 at rows [0, c), chunk 1 at [c, 2c)).
struct CpBlockDims {
  int64_t B = 0, Tl = 0, NH = 0, NKV = 0, D = 0;
  int64_t chunk() const { return Tl / 2; }
};

/// Running softmax of each query row (b, h, t): max m, sum l of exp(s - m), acc = sum exp(s-m) v.
/// Blocks may come in any order (the flash-attention / ring-attention merge).
struct OnlineSoftmax {
  explicit OnlineSoftmax(const CpBlockDims& d);
  std::vector<double> m, l, acc;  // (B, NH, Tl), (B, NH, Tl), (B, NH, Tl, D)
  /// out (B, Tl, NH, D) = acc / l; lse (B, NH, Tl) = m + log l.
  void finish(const CpBlockDims& d, float* out, float* lse) const;
};

/// Scores of local query chunk qc against key/value chunk kc of the block (k, v): all pairs, or
/// causal (key row <= query row inside the chunk) when `diagonal`. Scale 1/sqrt(D).
void cp_block_forward(const CpBlockDims& d, const float* q, const float* k, const float* v,
                      int qc, int kc, bool diagonal, OnlineSoftmax& s);

/// Backward of the same block with the final lse and delta = rowsum(dout * out) (B, NH, Tl):
/// dq (double, B, Tl, NH, D) +=, dk and dv (B, Tl, NKV, D) += for the key/value chunk kc.
void cp_block_backward(const CpBlockDims& d, const float* q, const float* k, const float* v,
                       const float* dout, const float* lse, const std::vector<double>& delta,
                       int qc, int kc, bool diagonal, std::vector<double>& dq, float* dk, float* dv);

}  // namespace meshplan::exec
