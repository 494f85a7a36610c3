// Helpers of the CUDA backend tests: a CUDA backend or a skip (exit 77: ctest "Skipped") when the
// build has no CUDA or the machine no GPU, a CPU twin, and device buffers filled from host vectors.
#pragma once
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "exec_test_util.h"
#include "executor/backend_factory.h"
#include "skip.h"

namespace cuda_test {

using meshplan::exec::Backend;
using meshplan::exec::DType;
using meshplan::exec::Tensor;

inline void skip_without_device() {
  if (!meshplan::exec::cuda_compiled()) meshplan_test::skip("this build has no CUDA backend");
  if (meshplan::exec::cuda_device_count() == 0) {
    meshplan_test::skip(meshplan::exec::cuda_unavailable_reason().c_str());
  }
}

/// The CUDA backend (device from the launcher's local rank, else 0), or a skip. The tight tests
/// use the fp32 reference attention; test_cuda_cudnn_attention.cpp tests cuDNN's against it.
inline std::unique_ptr<Backend> cuda_backend(
    meshplan::exec::GemmPrecision gemm = meshplan::exec::GemmPrecision::Fp32,
    meshplan::exec::CudaAttention attention = meshplan::exec::CudaAttention::Reference,
    bool deterministic_attention = false) {
  skip_without_device();
  meshplan::exec::CudaOptions o;
  o.gemm = gemm;
  o.attention = attention;
  o.deterministic_attention = deterministic_attention;
  auto made = meshplan::exec::make_backend("cuda", {}, o);
  if (!made) FAIL(made.error().one_line());
  return std::move(made).value();
}

/// The most exact CPU backend (triple-loop GEMM in double, scalar attention): the reference.
inline std::unique_ptr<Backend> cpu_reference() {
  meshplan::exec::CpuOptions o;
  o.naive_gemm = true;
  o.reference_attention = true;
  return meshplan::exec::make_cpu_backend(o);
}

/// A tensor on `be` holding `host` (floats or int32 by T).
template <class T>
Tensor upload(Backend& be, const std::vector<T>& host) {
  static_assert(std::is_same<T, float>::value || std::is_same<T, int32_t>::value, "f32 or i32");
  Tensor t(be, std::is_same<T, int32_t>::value ? DType::I32 : DType::F32, {static_cast<int64_t>(host.size())});
  be.copy_from_host(t.data(), host.data(), host.size() * sizeof(T));
  return t;
}

inline std::vector<float> download(Backend& be, const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  be.copy_to_host(out.data(), t.data(), t.bytes());
  return out;
}

inline std::vector<float> download(Backend& be, const float* p, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  be.copy_to_host(out.data(), p, static_cast<uint64_t>(n) * 4);
  return out;
}

/// Same bits?
inline bool identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace cuda_test
