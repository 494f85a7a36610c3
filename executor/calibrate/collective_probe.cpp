// Timed and verified MPI collectives over a size sweep. Timing runs on zero-filled buffers (sums
// stay finite however many calls run); one verification call per size then checks real values.
#include "executor/calibrate/collective_probe.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace meshplan::exec {

namespace {

struct Buffers {
  std::vector<float> in, out;
};

// Elements per rank (`count`) for a requested size: whole floats, divisible by the group size
// where the op splits the buffer.
int64_t elements_for(Collective op, double bytes, int n) {
  const int64_t floats = std::max<int64_t>(1, static_cast<int64_t>(bytes / 4));
  if (op == Collective::AllGather || op == Collective::ReduceScatter) return std::max<int64_t>(1, floats / n);
  return floats;
}

void call_once(Communicator& c, Collective op, Buffers& b, int64_t count) {
  const int n = c.size(), me = c.rank();
  switch (op) {
    case Collective::AllGather: c.all_gather(b.in.data(), b.out.data(), count); break;
    case Collective::ReduceScatter: c.reduce_scatter_sum(b.in.data(), b.out.data(), count); break;
    case Collective::PointToPoint: {
      CommRequest s = c.isend(b.in.data(), count, (me + 1) % n, 7);
      c.recv(b.out.data(), count, (me + n - 1) % n, 7);
      c.wait(s);
      break;
    }
    default: c.all_reduce(b.in.data(), count, ReduceOp::Sum); break;
  }
}

// Small integers keep every sum exact in fp32.
float pattern(int rank, int64_t i) { return static_cast<float>(rank + 1 + (i % 5)); }

bool verify(Communicator& c, Collective op, Buffers& b, int64_t count) {
  const int n = c.size(), me = c.rank();
  const int64_t in_count = op == Collective::ReduceScatter ? count * n : count;
  for (int64_t i = 0; i < in_count; ++i) b.in[i] = pattern(me, i);
  call_once(c, op, b, count);
  const int64_t step = std::max<int64_t>(1, count / 64);
  bool ok = true;
  for (int64_t i = 0; i < count; i += step) {
    float expect = 0;
    switch (op) {
      case Collective::AllGather:
        for (int r = 0; r < n; ++r) ok = ok && b.out[r * count + i] == pattern(r, i);
        continue;
      case Collective::ReduceScatter:
        for (int r = 0; r < n; ++r) expect += pattern(r, me * count + i);
        ok = ok && b.out[i] == expect;
        continue;
      case Collective::PointToPoint: ok = ok && b.out[i] == pattern((me + n - 1) % n, i); continue;
      default:
        for (int r = 0; r < n; ++r) expect += pattern(r, i);
        ok = ok && b.in[i] == expect;
    }
  }
  float bad = ok ? 0.0f : 1.0f;
  c.all_reduce(&bad, 1, ReduceOp::Max);
  return bad == 0.0f;
}

CollectiveMeasurement measure(Communicator& c, Collective op, double bytes, double target_s) {
  const int n = c.size();
  const int64_t count = elements_for(op, bytes, n);
  Buffers b;
  const int64_t in_count = op == Collective::ReduceScatter ? count * n : count;
  const int64_t out_count = op == Collective::AllGather ? count * n : count;
  b.in.assign(static_cast<size_t>(in_count), 0.0f);
  b.out.assign(static_cast<size_t>(out_count), 0.0f);
  CollectiveMeasurement m;
  m.op = op;
  m.ranks = n;
  m.bytes = 4.0 * static_cast<double>(std::max(in_count, out_count));
  m.time_s = time_collective_call(c, [&] { call_once(c, op, b, count); }, target_s, 1000);
  m.algbw_bytes_per_s = m.bytes / m.time_s;
  m.busbw_bytes_per_s = m.algbw_bytes_per_s * bus_bandwidth_factor(op, n);
  m.verified = verify(c, op, b, count);
  return m;
}

}  // namespace

std::vector<CollectiveMeasurement> run_collective_probe(Communicator& group, const CollectiveSweep& sweep,
                                                        const ProgressFn& progress) {
  std::vector<CollectiveMeasurement> out;
  const Collective ops[] = {Collective::AllReduceRing, Collective::AllGather, Collective::ReduceScatter,
                            Collective::PointToPoint};
  // min, min*f, min*f^2, ... and max_bytes itself when the progression steps over it.
  std::vector<double> sizes;
  for (double b = sweep.min_bytes; b <= sweep.max_bytes * (1 + 1e-9); b *= sweep.size_factor) sizes.push_back(b);
  if (sizes.empty() || sizes.back() < sweep.max_bytes * (1 - 1e-9)) sizes.push_back(sweep.max_bytes);
  const double total = 4.0 * static_cast<double>(sizes.size());
  const double start = probe_now_s();
  for (int k = 0; k < 4; ++k) {
    for (size_t s = 0; s < sizes.size(); ++s) {
      if (progress) progress((k * sizes.size() + s) / total, std::string(to_string(ops[k])) + " " + std::to_string(static_cast<int64_t>(sizes[s])) + " B");
      CollectiveMeasurement m = measure(group, ops[k], sizes[s], sweep.target_s);
      out.push_back(m);
      // Every rank sees the same (max-reduced) time, so every rank stops at the same size.
      float elapsed = static_cast<float>(probe_now_s() - start);
      group.all_reduce(&elapsed, 1, ReduceOp::Max);
      if (m.time_s > sweep.max_call_s || elapsed > sweep.budget_s * (k + 1) / 4.0) break;
    }
  }
  return out;
}

std::vector<CollectiveSample> collective_samples(const std::vector<CollectiveMeasurement>& m) {
  std::vector<CollectiveSample> out;
  for (const auto& x : m) out.push_back({x.op, x.ranks, x.bytes, x.time_s});
  return out;
}

}  // namespace meshplan::exec
