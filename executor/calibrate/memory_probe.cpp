// Streaming axpy bandwidth with an exact check (x = 1, a = 0.5: y grows by exact halves).
#include "executor/calibrate/memory_probe.h"

#include <algorithm>
#include <vector>

#include "executor/tensor.h"

namespace meshplan::exec {

BandwidthMeasurement run_memory_probe(Backend& backend, Communicator& group, int64_t bytes_per_array,
                                      double target_s) {
  BandwidthMeasurement m;
  m.elements = std::max<int64_t>(1024, bytes_per_array / 4);
  m.bytes_per_call = 12.0 * static_cast<double>(m.elements);
  Tensor x(backend, DType::F32, {m.elements}), y(backend, DType::F32, {m.elements});
  backend.fill(x.f32(), 1.0f, m.elements);
  backend.fill(y.f32(), 0.0f, m.elements);
  int calls = 0;
  group.barrier();
  float t = static_cast<float>(time_local_call([&] { backend.axpy(y.f32(), 0.5f, x.f32(), m.elements); ++calls; },
                                               target_s, 50));
  std::vector<float> all(static_cast<size_t>(group.size()));
  group.all_gather(&t, all.data(), 1);
  std::sort(all.begin(), all.end());
  m.time_s = all[all.size() / 2];
  m.bytes_per_s = m.bytes_per_call / m.time_s;
  // Every element is 0.5 * calls (exact in fp32 for fewer than 2^24 calls).
  float first = 0, last = 0;
  backend.copy_to_host(&first, y.f32(), 4);
  backend.copy_to_host(&last, y.f32() + m.elements - 1, 4);
  m.verified = first == 0.5f * calls && last == 0.5f * calls;
  return m;
}

}  // namespace meshplan::exec
