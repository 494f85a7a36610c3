// Tensor: an owning, device-agnostic buffer allocated through its Backend, whose MemoryTracker
// counts every byte our tensors hold (the executor's "measured" memory). No MPI, no Eigen here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace meshplan::exec {

class Backend;

enum class DType { F32, I32, BF16 };
uint64_t dtype_bytes(DType t);
const char* to_string(DType t);

/// Bytes held by our tensors on one device and their high-water mark. Every allocation of the
/// executor goes through Backend::allocate, which reports here; predicted-vs-measured memory
/// compares the cost model with peak_bytes().
class MemoryTracker {
 public:
  void on_allocate(uint64_t bytes);
  void on_free(uint64_t bytes);
  uint64_t held_bytes() const { return held_bytes_; }
  uint64_t peak_bytes() const { return peak_bytes_; }
  uint64_t live_allocations() const { return live_allocations_; }
  /// Starts a new high-water mark from what is held now (e.g. after initialisation).
  void reset_peak() { peak_bytes_ = held_bytes_; }

 private:
  uint64_t held_bytes_ = 0;
  uint64_t peak_bytes_ = 0;
  uint64_t live_allocations_ = 0;
};

/// Owning buffer of `numel` elements on the backend's device, row-major with a shape kept for
/// checks and messages. Move-only; freed (and uncounted) on destruction or reset().
/// Memory is uninitialised after construction: call Backend::fill or copy into it.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Backend& backend, DType dtype, std::vector<int64_t> shape);
  Tensor(Tensor&& o) noexcept;
  Tensor& operator=(Tensor&& o) noexcept;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { reset(); }

  void reset();
  bool empty() const { return data_ == nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  uint64_t bytes() const { return static_cast<uint64_t>(numel_) * dtype_bytes(dtype_); }
  std::string shape_string() const;  // "(4, 64, 128)"

  void* data() { return data_; }
  const void* data() const { return data_; }
  float* f32();              // asserts dtype F32
  const float* f32() const;
  int32_t* i32();            // asserts dtype I32
  const int32_t* i32() const;

 private:
  Backend* backend_ = nullptr;
  void* data_ = nullptr;
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
};

int64_t shape_numel(const std::vector<int64_t>& shape);

}  // namespace meshplan::exec
