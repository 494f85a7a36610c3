// CudnnAttention: causal GQA attention forward and backward through cuDNN's fused SDPA graphs
// (cudnn-frontend), bf16 q/k/v/o on tensor cores with fp32 softmax statistics.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "executor/backend.h"

namespace meshplan::exec {

/// One cuDNN handle on one stream and the built graphs, cached per shape. Layouts are the
/// executor's: q, o, dq, do (B, T, NH, D) and k, v, dk, dv (B, T, NKV, D) bf16, row-major; stats
/// (B, NH, T) fp32 natural-log log-sum-exp of the scaled, masked scores (what our lse holds).
class CudnnAttention {
 public:
  /// deterministic: cuDNN's bitwise-repeatable backward (more workspace), else dQ by atomics.
  CudnnAttention(cudaStream_t stream, bool deterministic);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  /// Whether cuDNN has an engine for this shape and device (head dim % 8, D <= 256 on Hopper,
  /// <= 128 backward elsewhere, T > 1 for the backward). Builds and caches both graphs once.
  bool supports(const AttentionDims& d);
  /// Workspace bytes of the forward / backward graph of this shape (supports(d) must hold).
  int64_t forward_workspace_bytes(const AttentionDims& d);
  int64_t backward_workspace_bytes(const AttentionDims& d);

  void forward(void* o, float* stats, const void* q, const void* k, const void* v, const AttentionDims& d,
               void* workspace);
  void backward(void* dq, void* dk, void* dv, const void* dout, const void* q, const void* k, const void* v,
                const void* o, const float* stats, const AttentionDims& d, void* workspace);

  /// cuDNN's version number as cudnnGetVersion() reports it (e.g. 91900).
  static int64_t library_version();

 private:
  struct Graphs;
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;
  Graphs& graphs(const AttentionDims& d);
  void* handle_ = nullptr;  // cudnnHandle_t
  bool deterministic_ = false;
  std::map<Key, std::unique_ptr<Graphs>> cache_;
};

}  // namespace meshplan::exec
