// DevicePool: the CUDA backend's allocator. Blocks come from cudaMalloc once and are cached by
// size on free, so a training step's repeated activation allocations (same shapes every micro-
// batch) are served without cudaMalloc/cudaFree; the reserved high-water mark and the device's own
// used-memory peak (cudaMemGetInfo) are what "measured memory" compares with the cost model.
#pragma once
#include <cstdint>
#include <map>
#include <unordered_map>

namespace meshplan::exec {

/// Device memory facts of one backend (bytes).
struct DeviceMemoryStats {
  uint64_t reserved_bytes = 0;       // held from cudaMalloc by the pool now (in use + cached)
  uint64_t peak_reserved_bytes = 0;  // high-water mark of reserved_bytes
  uint64_t in_use_bytes = 0;         // rounded sizes of the blocks handed out now
  uint64_t peak_in_use_bytes = 0;
  uint64_t device_total_bytes = 0;   // cudaMemGetInfo total
  uint64_t peak_device_used_bytes = 0;  // max of (total - free) over the samples (every cudaMalloc
                                        // and every sample_device_memory call): all processes and
                                        // the CUDA context included
  uint64_t cuda_mallocs = 0;         // calls that reached cudaMalloc (a warm pool makes none)
};

/// Single-stream caching allocator: blocks are only reused in the order of the stream that owns
/// them (the backend's compute stream), so no events are needed. Not thread-safe.
class DevicePool {
 public:
  DevicePool() = default;
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  /// A block of at least `bytes` (256-byte aligned). On cudaMalloc failure the cache is released
  /// and the allocation retried once; a second failure throws DeviceError.
  void* allocate(uint64_t bytes);
  void free(void* ptr);
  /// cudaFree every cached (unused) block.
  void release_cached();
  /// Samples cudaMemGetInfo into the device peak.
  void sample_device_memory();
  const DeviceMemoryStats& stats() const { return stats_; }
  void reset_peaks();

  /// Size class of a request: 512-byte multiples below 1 MiB, 2 MiB multiples above (large
  /// blocks in coarse classes keep the number of distinct cached sizes small).
  static uint64_t rounded_size(uint64_t bytes);

 private:
  std::unordered_map<void*, uint64_t> live_;       // block -> rounded size
  std::multimap<uint64_t, void*> cached_;          // rounded size -> free block
  DeviceMemoryStats stats_;
};

}  // namespace meshplan::exec
