// CudaBackend: device selection, stream, pool-backed memory, copies, reductions and the dispatch of
// each kernel virtual to its launcher (launch.h). GEMMs are in cuda_gemm.cpp.
#include "executor/cuda/cuda_backend.h"

#include <cassert>

#include "executor/cuda/cuda_check.h"
#include "executor/cuda/launch.h"

namespace meshplan::exec {

namespace {
constexpr uint64_t kLtWorkspaceBytes = 32ull << 20;  // cuBLASLt scratch; Hopper kernels like >= 32 MiB
}

CudaBackend::CudaBackend(const CudaOptions& options) : options_(options) {
  device_ = options.device < 0 ? 0 : options.device;
  CUDA_CHECK(cudaSetDevice(device_));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
  device_name_ = prop.name;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasLtCreate(&lt_));
  lt_workspace_bytes_ = kLtWorkspaceBytes;
  lt_workspace_ = pool_.allocate(lt_workspace_bytes_);  // not our tensors: outside memory()
  CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&reduce_host_), sizeof(double)));
}

CudaBackend::~CudaBackend() {
  // No throwing from a destructor: failures at teardown (a lost device) are ignored.
  cudaStreamSynchronize(stream_);
  kept_operands_.clear();
  destroy_attention();
  destroy_gemm_plans();
  if (lt_workspace_ != nullptr) pool_.free(lt_workspace_);
  if (reduce_host_ != nullptr) cudaFreeHost(reduce_host_);
  if (lt_ != nullptr) cublasLtDestroy(lt_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void* CudaBackend::allocate_raw(uint64_t bytes) { return pool_.allocate(bytes); }
void CudaBackend::free_raw(void* ptr, uint64_t) { pool_.free(ptr); }

void CudaBackend::copy_from_host(void* dst, const void* host_src, uint64_t bytes) {
  if (bytes == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
  // The caller may free or reuse its host buffer on return.
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy_to_host(void* host_dst, const void* src, uint64_t bytes) {
  if (bytes == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy(void* dst, const void* src, uint64_t bytes) {
  if (bytes == 0 || dst == src) return;
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::synchronize() {
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  pool_.sample_device_memory();
}

void CudaBackend::fill(float* x, float value, int64_t n) { cuda::fill(stream_, x, value, n); }
void CudaBackend::scale(float* x, float a, int64_t n) { cuda::scale(stream_, x, a, n); }
void CudaBackend::axpy(float* y, float a, const float* x, int64_t n) { cuda::axpy(stream_, y, a, x, n); }
void CudaBackend::add(float* out, const float* a, const float* b, int64_t n) {
  cuda::add(stream_, out, a, b, n);
}

double CudaBackend::reduce_to_host(const float* x, int64_t n, bool squares) {
  if (n <= 0) return 0.0;
  // (partials, result) doubles: transient, tracked like every scratch buffer.
  const uint64_t bytes = (static_cast<uint64_t>(cuda::reduce_blocks(n)) + 1) * sizeof(double);
  double* partial = static_cast<double*>(allocate(bytes));
  double* result = partial + cuda::reduce_blocks(n);
  cuda::reduce_sum(stream_, x, n, squares, partial, result);
  CUDA_CHECK(cudaMemcpyAsync(reduce_host_, result, sizeof(double), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  deallocate(partial, bytes);
  return *reduce_host_;
}

double CudaBackend::sum_squares(const float* x, int64_t n) { return reduce_to_host(x, n, true); }
double CudaBackend::sum(const float* x, int64_t n) { return reduce_to_host(x, n, false); }

void CudaBackend::embedding_forward(float* out, const int32_t* tokens, const float* table,
                                    int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) {
  cuda::embedding_forward(stream_, out, tokens, table, vocab_begin, Vl, N, C);
}
void CudaBackend::embedding_backward(float* dtable, const float* dout, const int32_t* tokens,
                                     int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) {
  if (N <= 0 || C <= 0) return;
  const uint64_t bytes = cuda::embedding_backward_scratch_bytes(N);  // sort keys, positions, CUB temp
  Tensor scratch(*this, DType::I32, {static_cast<int64_t>((bytes + 3) / 4)});
  cuda::embedding_backward(stream_, dtable, dout, tokens, vocab_begin, Vl, N, C, scratch.data());
}

void CudaBackend::rmsnorm_forward(float* out, float* rstd, const float* x, const float* w,
                                  int64_t N, int64_t C, float eps) {
  cuda::rmsnorm_forward(stream_, out, rstd, x, w, N, C, eps);
}
void CudaBackend::rmsnorm_forward_bf16(void* out, float* rstd, const float* x, const float* w, int64_t N,
                                       int64_t C, float eps) {
  cuda::rmsnorm_forward_bf16(stream_, out, rstd, x, w, N, C, eps);
}
void CudaBackend::rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x,
                                   const float* w, const float* rstd, int64_t N, int64_t C) {
  if (N <= 0 || C <= 0) return;
  Tensor partial(*this, DType::F32, {cuda::rmsnorm_dw_partial_rows(N), C});  // dw per row chunk
  cuda::rmsnorm_backward(stream_, dx, dw, dout, x, w, rstd, N, C, partial.f32());
}

void CudaBackend::rope_forward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta) {
  assert(D % 2 == 0);
  cuda::rope(stream_, x, B, T, H, D, theta, 1.0f);
}
void CudaBackend::rope_forward_bf16(void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                                    float theta) {
  assert(D % 2 == 0);
  cuda::rope_forward_bf16(stream_, out, x, B, T, H, D, theta);
}
void CudaBackend::rope_backward(float* dx, int64_t B, int64_t T, int64_t H, int64_t D, float theta) {
  assert(D % 2 == 0);
  cuda::rope(stream_, dx, B, T, H, D, theta, -1.0f);  // a rotation's transpose is its inverse
}

void CudaBackend::swiglu_forward(float* out, const float* gate, const float* up, int64_t n) {
  cuda::swiglu_forward(stream_, out, gate, up, n);
}
void CudaBackend::swiglu_forward_bf16(void* out, const float* gate, const float* up, int64_t n) {
  cuda::swiglu_forward_bf16(stream_, out, gate, up, n);
}
void CudaBackend::swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                                  const float* up, int64_t n) {
  cuda::swiglu_backward(stream_, dgate, dup, dout, gate, up, n);
}

void CudaBackend::ce_row_max(float* row_max, const float* logits, int64_t N, int64_t Vl) {
  cuda::ce_row_max(stream_, row_max, logits, N, Vl);
}
void CudaBackend::ce_row_sumexp(float* sumexp, const float* logits, const float* row_max, int64_t N,
                                int64_t Vl) {
  cuda::ce_row_sumexp(stream_, sumexp, logits, row_max, N, Vl);
}
void CudaBackend::ce_target_logit(float* target_logit, const float* logits, const int32_t* targets,
                                  int64_t vocab_begin, int64_t N, int64_t Vl) {
  cuda::ce_target_logit(stream_, target_logit, logits, targets, vocab_begin, N, Vl);
}
void CudaBackend::ce_merge_stats(float* row_max, float* sumexp, const float* chunk_max,
                                 const float* chunk_sumexp, int64_t N) {
  cuda::ce_merge_stats(stream_, row_max, sumexp, chunk_max, chunk_sumexp, N);
}
void CudaBackend::ce_loss(float* loss, const float* row_max, const float* sumexp,
                          const float* target_logit, int64_t N) {
  cuda::ce_loss(stream_, loss, row_max, sumexp, target_logit, N);
}
void CudaBackend::ce_backward(float* dlogits, const float* logits, const float* row_max,
                              const float* sumexp, const int32_t* targets, int64_t vocab_begin,
                              float scale, int64_t N, int64_t Vl) {
  cuda::ce_backward(stream_, dlogits, logits, row_max, sumexp, targets, vocab_begin, scale, N, Vl);
}

void CudaBackend::adamw(float* param, const float* grad, float* m, float* v, int64_t n,
                        const AdamWStep& s) {
  cuda::adamw(stream_, param, grad, m, v, n, s);
}

}  // namespace meshplan::exec
