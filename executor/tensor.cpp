// Tensor and MemoryTracker: owning device buffers whose bytes are counted by their backend.
#include "executor/tensor.h"

#include <cassert>
#include <sstream>
#include <utility>

#include "executor/backend.h"

namespace meshplan::exec {

uint64_t dtype_bytes(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::I32: return 4;
    case DType::BF16: return 2;
  }
  return 4;
}

const char* to_string(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::I32: return "i32";
    case DType::BF16: return "bf16";
  }
  return "?";
}

void MemoryTracker::on_allocate(uint64_t bytes) {
  held_bytes_ += bytes;
  ++live_allocations_;
  if (held_bytes_ > peak_bytes_) peak_bytes_ = held_bytes_;
}

void MemoryTracker::on_free(uint64_t bytes) {
  assert(bytes <= held_bytes_ && live_allocations_ > 0 && "free of memory not allocated");
  held_bytes_ -= bytes;
  --live_allocations_;
}

int64_t shape_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    assert(d >= 0);
    n *= d;
  }
  return n;
}

Tensor::Tensor(Backend& backend, DType dtype, std::vector<int64_t> shape)
    : backend_(&backend), dtype_(dtype), shape_(std::move(shape)), numel_(shape_numel(shape_)) {
  if (numel_ > 0) data_ = backend_->allocate(bytes());
}

Tensor::Tensor(Tensor&& o) noexcept
    : backend_(o.backend_), data_(o.data_), dtype_(o.dtype_), shape_(std::move(o.shape_)),
      numel_(o.numel_) {
  o.data_ = nullptr;
  o.numel_ = 0;
}

Tensor& Tensor::operator=(Tensor&& o) noexcept {
  if (this != &o) {
    reset();
    backend_ = o.backend_;
    data_ = o.data_;
    dtype_ = o.dtype_;
    shape_ = std::move(o.shape_);
    numel_ = o.numel_;
    o.data_ = nullptr;
    o.numel_ = 0;
  }
  return *this;
}

void Tensor::reset() {
  if (data_ != nullptr) backend_->deallocate(data_, bytes());
  data_ = nullptr;
  numel_ = 0;
  shape_.clear();
}

std::string Tensor::shape_string() const {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < shape_.size(); ++i) os << (i ? ", " : "") << shape_[i];
  os << ')';
  return os.str();
}

float* Tensor::f32() {
  assert(dtype_ == DType::F32);
  return static_cast<float*>(data_);
}
const float* Tensor::f32() const {
  assert(dtype_ == DType::F32);
  return static_cast<const float*>(data_);
}
int32_t* Tensor::i32() {
  assert(dtype_ == DType::I32);
  return static_cast<int32_t*>(data_);
}
const int32_t* Tensor::i32() const {
  assert(dtype_ == DType::I32);
  return static_cast<const int32_t*>(data_);
}

void* Backend::allocate(uint64_t bytes) {
  void* p = allocate_raw(bytes);
  memory_.on_allocate(bytes);
  return p;
}

void Backend::deallocate(void* ptr, uint64_t bytes) {
  if (ptr == nullptr) return;
  free_raw(ptr, bytes);
  memory_.on_free(bytes);
}

}  // namespace meshplan::exec
