// HBM bandwidth and NCCL collective probes of the CUDA calibration. Collectives follow
// executor/calibrate/collective_probe.cpp (nccl-tests sizes, algbw/busbw, verification) on device
// buffers; times come from CUDA events on the compute stream, which waits for each operation.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "costmodel/collectives.h"
#include "executor/cuda/cuda_check.h"
#include "executor/cuda/launch.h"
#include "executor/cuda/probe_gemm.h"

namespace meshplan::exec {

namespace {

// Seconds of one call of `call` on `stream`: a warm-up sizes batches of about target_s / 3; the
// median batch wins. With `group`, the warm-up time is max-reduced so every rank runs the same
// number of calls (collectives must match).
template <class F>
double time_on_stream(cudaStream_t stream, F&& call, double target_s, Communicator* group) {
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  auto timed = [&](int iters) {
    CUDA_CHECK(cudaEventRecord(e0, stream));
    for (int i = 0; i < iters; ++i) call();
    CUDA_CHECK(cudaEventRecord(e1, stream));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms * 1e-3 / iters;
  };
  float warm = static_cast<float>(timed(1));
  if (group != nullptr) group->all_reduce(&warm, 1, ReduceOp::Max);  // host float: the MPI path
  const int iters = std::clamp(static_cast<int>(target_s / 3 / std::max(1e-6f, warm)), 1, 1000);
  std::vector<double> t;
  for (int b = 0; b < 3; ++b) t.push_back(timed(iters));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  float median = static_cast<float>(t[1]);
  if (group != nullptr) group->all_reduce(&median, 1, ReduceOp::Max);  // the slowest rank
  return median;
}

int64_t elements_for(Collective op, double bytes, int n) {
  const int64_t floats = std::max<int64_t>(1, static_cast<int64_t>(bytes / 4));
  if (op == Collective::AllGather || op == Collective::ReduceScatter) return std::max<int64_t>(1, floats / n);
  return floats;
}

void call_once(Communicator& c, Collective op, float* in, float* out, int64_t count) {
  const int n = c.size(), me = c.rank();
  switch (op) {
    case Collective::AllGather: c.all_gather(in, out, count); break;
    case Collective::ReduceScatter: c.reduce_scatter_sum(in, out, count); break;
    case Collective::PointToPoint: {
      CommRequest s = c.isend(in, count, (me + 1) % n, 7);
      c.recv(out, count, (me + n - 1) % n, 7);
      c.wait(s);
      break;
    }
    default: c.all_reduce(in, count, ReduceOp::Sum); break;
  }
}

float pattern(int rank, int64_t i) { return static_cast<float>(rank + 1 + (i % 5)); }

bool verify(CudaBackend& be, Communicator& c, Collective op, float* in, float* out, int64_t count) {
  const int n = c.size(), me = c.rank();
  const int64_t in_count = op == Collective::ReduceScatter ? count * n : count;
  const int64_t out_count = op == Collective::AllGather ? count * n : count;
  std::vector<float> host_in(static_cast<size_t>(in_count)), host_out(static_cast<size_t>(out_count));
  for (int64_t i = 0; i < in_count; ++i) host_in[i] = pattern(me, i);
  be.copy_from_host(in, host_in.data(), host_in.size() * 4);
  call_once(c, op, in, out, count);
  const bool in_place = op == Collective::AllReduceRing;
  be.copy_to_host(host_out.data(), in_place ? in : out, host_out.size() * 4);
  const int64_t step = std::max<int64_t>(1, count / 64);
  bool ok = true;
  for (int64_t i = 0; i < count; i += step) {
    float expect = 0;
    switch (op) {
      case Collective::AllGather:
        for (int r = 0; r < n; ++r) ok = ok && host_out[r * count + i] == pattern(r, i);
        break;
      case Collective::ReduceScatter:
        for (int r = 0; r < n; ++r) expect += pattern(r, me * count + i);
        ok = ok && host_out[i] == expect;
        break;
      case Collective::PointToPoint: ok = ok && host_out[i] == pattern((me + n - 1) % n, i); break;
      default:
        for (int r = 0; r < n; ++r) expect += pattern(r, i);
        ok = ok && host_out[i] == expect;
    }
  }
  float bad = ok ? 0.0f : 1.0f;
  c.all_reduce(&bad, 1, ReduceOp::Max);
  return bad == 0.0f;
}

}  // namespace

BandwidthMeasurement probe_hbm(CudaBackend& backend, int64_t bytes, double target_s) {
  BandwidthMeasurement m;
  m.elements = std::max<int64_t>(1, bytes / 4);
  m.bytes_per_call = 8.0 * static_cast<double>(m.elements);  // read x, write y
  Tensor x(backend, DType::F32, {m.elements}), y(backend, DType::F32, {m.elements});
  cuda::fill_pattern(backend.stream(), x.data(), m.elements, cuda::ProbeType::F32, 3);
  cuda::fill(backend.stream(), y.f32(), 0.0f, m.elements);
  m.time_s = time_on_stream(backend.stream(), [&] { cuda::copy_kernel(backend.stream(), y.f32(), x.f32(), m.elements); },
                            target_s, nullptr);
  m.bytes_per_s = m.bytes_per_call / m.time_s;
  float first = 0, last = 0;
  backend.copy_to_host(&first, y.f32(), 4);
  backend.copy_to_host(&last, y.f32() + m.elements - 1, 4);
  m.verified = first == cuda::probe_pattern_value(0, 3) && last == cuda::probe_pattern_value(m.elements - 1, 3);
  return m;
}

std::vector<CollectiveMeasurement> probe_nccl_sweep(CudaBackend& backend, Communicator& group,
                                                    const CollectiveSweep& sweep, const ProgressFn& progress) {
  std::vector<CollectiveMeasurement> out;
  const int n = group.size();
  if (n < 2) return out;
  const Collective ops[] = {Collective::AllReduceRing, Collective::AllGather, Collective::ReduceScatter,
                            Collective::PointToPoint};
  std::vector<double> sizes;
  for (double b = sweep.min_bytes; b <= sweep.max_bytes * (1 + 1e-9); b *= sweep.size_factor) sizes.push_back(b);
  if (sizes.empty() || sizes.back() < sweep.max_bytes * (1 - 1e-9)) sizes.push_back(sweep.max_bytes);
  const double total = 4.0 * static_cast<double>(sizes.size());
  double elapsed_s = 0;
  for (int k = 0; k < 4; ++k) {
    for (size_t si = 0; si < sizes.size(); ++si) {
      const Collective op = ops[k];
      if (progress) progress((k * sizes.size() + si) / total, std::string("NCCL ") + to_string(op) + " " +
                                                                   std::to_string(static_cast<int64_t>(sizes[si])) + " B");
      const int64_t count = elements_for(op, sizes[si], n);
      const int64_t in_count = op == Collective::ReduceScatter ? count * n : count;
      const int64_t out_count = op == Collective::AllGather ? count * n : count;
      Tensor in(backend, DType::F32, {in_count}), res(backend, DType::F32, {out_count});
      backend.fill(in.f32(), 0.0f, in_count);  // zeros: sums stay finite however many calls run
      CollectiveMeasurement m;
      m.op = op;
      m.ranks = n;
      m.bytes = 4.0 * static_cast<double>(std::max(in_count, out_count));
      m.time_s = time_on_stream(backend.stream(), [&] { call_once(group, op, in.f32(), res.f32(), count); },
                                sweep.target_s, &group);
      m.algbw_bytes_per_s = m.bytes / m.time_s;
      m.busbw_bytes_per_s = m.algbw_bytes_per_s * bus_bandwidth_factor(op, n);
      m.verified = verify(backend, group, op, in.f32(), res.f32(), count);
      out.push_back(m);
      elapsed_s += m.time_s * 4;  // roughly: warm-up + 3 batches of target_s / 3
      elapsed_s += sweep.target_s;
      if (m.time_s > sweep.max_call_s || elapsed_s > sweep.budget_s * (k + 1) / 4.0) break;
    }
  }
  return out;
}

}  // namespace meshplan::exec
