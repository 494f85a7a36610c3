// DevicePool: cudaMalloc'd blocks cached by size class, with reserved/in-use/device peaks.
#include "executor/cuda/device_pool.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "executor/cuda/cuda_check.h"

namespace meshplan::exec {

namespace {
constexpr uint64_t kSmall = 1ull << 20;       // below: 512-byte classes
constexpr uint64_t kSmallStep = 512;
constexpr uint64_t kLargeStep = 2ull << 20;   // above: 2 MiB classes
// A cached block may serve a request up to this much smaller (large blocks only), so a slightly
// smaller activation reuses a block instead of reserving a new one.
constexpr double kMaxSlack = 1.25;
}  // namespace

uint64_t DevicePool::rounded_size(uint64_t bytes) {
  if (bytes == 0) bytes = 1;
  const uint64_t step = bytes < kSmall ? kSmallStep : kLargeStep;
  return (bytes + step - 1) / step * step;
}

DevicePool::~DevicePool() {
  // Destructors must not throw: errors here (a dead context at exit) are ignored.
  for (auto& [size, p] : cached_) cudaFree(p);
  for (auto& [p, size] : live_) cudaFree(p);
}

void* DevicePool::allocate(uint64_t bytes) {
  const uint64_t size = rounded_size(bytes);
  auto it = cached_.lower_bound(size);
  const uint64_t max_ok = size < kSmall ? size : static_cast<uint64_t>(size * kMaxSlack);
  void* p = nullptr;
  uint64_t got = size;
  if (it != cached_.end() && it->first <= max_ok) {
    p = it->second;
    got = it->first;
    cached_.erase(it);
  } else {
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release_cached();
      e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess) {
      cuda_check(e, ("cudaMalloc(" + std::to_string(size) + " bytes; pool reserves " +
                     std::to_string(stats_.reserved_bytes) + ")").c_str(),
                 __FILE__, __LINE__);
    }
    ++stats_.cuda_mallocs;
    stats_.reserved_bytes += size;
    stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
    sample_device_memory();
  }
  live_.emplace(p, got);
  stats_.in_use_bytes += got;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
  return p;
}

void DevicePool::free(void* ptr) {
  if (ptr == nullptr) return;
  auto it = live_.find(ptr);
  assert(it != live_.end() && "DevicePool::free of a pointer it did not allocate");
  stats_.in_use_bytes -= it->second;
  cached_.emplace(it->second, ptr);
  live_.erase(it);
}

void DevicePool::release_cached() {
  if (cached_.empty()) return;
  // Blocks may still be read by queued kernels: wait before returning them to the driver.
  CUDA_CHECK(cudaDeviceSynchronize());
  for (auto& [size, p] : cached_) {
    CUDA_CHECK(cudaFree(p));
    stats_.reserved_bytes -= size;
  }
  cached_.clear();
}

void DevicePool::sample_device_memory() {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  stats_.device_total_bytes = total_b;
  stats_.peak_device_used_bytes = std::max<uint64_t>(stats_.peak_device_used_bytes, total_b - free_b);
}

void DevicePool::reset_peaks() {
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
  stats_.peak_in_use_bytes = stats_.in_use_bytes;
  stats_.peak_device_used_bytes = 0;
  sample_device_memory();
}

}  // namespace meshplan::exec
