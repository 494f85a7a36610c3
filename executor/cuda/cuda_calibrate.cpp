// run_cuda_calibration: the CUDA backend and an NCCL communicator over the calibrate ranks, the
// GEMM / HBM / NCCL probes, device facts and the fits (costmodel/fit.h), as in the CPU calibration.
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "executor/backend_factory.h"
#include "executor/checkpoint/shard_file.h"
#include "executor/cuda/cuda_calibrate.h"
#include "executor/cuda/cuda_check.h"
#include "executor/cuda/nccl_comm.h"
#include "executor/cuda/probe_gemm.h"
#include "executor/train/rank_agreement.h"

namespace meshplan::exec {

namespace {

ProgressFn phase(const ProgressFn& p, double begin, double end) {
  if (!p) return nullptr;
  return [p, begin, end](double f, const std::string& what) { p(begin + f * (end - begin), what); };
}

// Median over ranks of each measurement's time (every rank ran the same shapes).
void median_over_ranks(Communicator& world, std::vector<CudaGemmMeasurement>& m) {
  const int n = world.size();
  std::vector<float> mine(m.size()), all(m.size() * n);
  for (size_t i = 0; i < m.size(); ++i) mine[i] = static_cast<float>(m[i].time_s);
  if (m.empty()) return;
  world.all_gather(mine.data(), all.data(), static_cast<int64_t>(m.size()));
  for (size_t i = 0; i < m.size(); ++i) {
    std::vector<float> t;
    for (int r = 0; r < n; ++r) t.push_back(all[r * m.size() + i]);
    std::sort(t.begin(), t.end());
    m[i].time_s = t[t.size() / 2];
    if (m[i].supported && m[i].time_s > 0) m[i].flops_per_s = m[i].shape.flops() / m[i].time_s;
  }
}

std::string host_name() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

int ranks_on_my_host(Communicator& world, const std::string& host) {
  const uint64_t mine = fnv1a64(host.data(), host.size()) & ((1ull << 48) - 1);
  int same = 0;
  for (uint64_t h : all_gather_u64(world, mine)) same += h == mine;
  return same;
}

void fit_all(CudaCalibrationResult& r) {
  CalibrationResult& c = r.common;
  const std::vector<GemmSample> g = gemm_samples(c.gemm);
  c.peak_flops = peak_flops_of(g);
  c.gemm_fit = fit_gemm(g);
  c.gemm_curve = gemm_efficiency_curve(g, c.peak_flops);
  for (const CudaGemmMeasurement& m : r.gemm_all) {
    if (m.supported && m.verified) r.peak_flops[m.dtype] = std::max(r.peak_flops[m.dtype], m.flops_per_s);
  }
  const std::vector<CollectiveSample> s = collective_samples(c.collectives);
  if (s.size() >= 2) c.link = fit_link(s);
  for (Collective op : {Collective::AllReduceRing, Collective::AllGather, Collective::ReduceScatter,
                        Collective::PointToPoint}) {
    std::vector<CollectiveSample> one = samples_of(s, op);
    if (one.size() >= 2) c.per_collective[op] = fit_link(one);
  }
}

}  // namespace

CudaCalibrationResult run_cuda_calibration(Communicator& world, const CudaCalibrationOptions& o) {
  CudaCalibrationResult r;
  CalibrationResult& c = r.common;
  c.ranks = world.size();
  c.host = host_name();
  c.ranks_per_node = ranks_on_my_host(world, c.host);

  auto made = make_backend("cuda");
  if (!made) device_fail("CUDA", made.error().message, "make_backend(\"cuda\")", __FILE__, __LINE__);
  std::unique_ptr<Backend> owner = std::move(made).value();
  auto& backend = dynamic_cast<CudaBackend&>(*owner);
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, backend.device()));
  r.device_name = prop.name;
  r.device_memory_bytes = static_cast<double>(prop.totalGlobalMem);
  r.sm_count = prop.multiProcessorCount;
  r.compute_capability = prop.major * 10 + prop.minor;
  int nccl_version = 0;
  NCCL_CHECK(ncclGetVersion(&nccl_version));
  r.nccl_version = std::to_string(nccl_version / 10000) + "." + std::to_string(nccl_version / 100 % 100) + "." +
                   std::to_string(nccl_version % 100);
  c.backend = "cuda";
  c.cpu_name = r.device_name;
  c.host_memory_bytes = r.device_memory_bytes;

  r.gemm_all = probe_gemm_sweep(backend, o.dtypes, default_cuda_gemm_shapes(o.gemm_max_n), o.gemm_target_s,
                                phase(o.progress, 0.0, 0.5));
  median_over_ranks(world, r.gemm_all);
  for (const CudaGemmMeasurement& m : r.gemm_all) {
    if (m.dtype != "bf16" || !m.supported) continue;
    c.gemm.push_back(GemmMeasurement{m.shape, m.time_s, m.max_rel_error, m.verified});
  }
  // The fastest verified bf16 GEMM of the sweep, run back to back until the clock settles at the
  // power limit (costmodel/README.md "Sustained clocks"); every rank's result agrees (slowest rank).
  const CudaGemmMeasurement* best = nullptr;
  for (const CudaGemmMeasurement& m : r.gemm_all)
    if (m.dtype == "bf16" && m.supported && m.verified && (!best || m.flops_per_s > best->flops_per_s)) best = &m;
  if (best != nullptr && o.soak_s > 0.0) {
    if (o.progress) o.progress(0.5, "sustained-clock soak");
    c.soak = probe_gemm_soak(backend, world, "bf16", best->shape, best->time_s, o.soak_s);
  }
  if (o.progress) o.progress(0.5, "HBM bandwidth");
  c.memory = probe_hbm(backend, o.hbm_bytes, o.gemm_target_s * 4);
  if (world.size() >= 2) {
    NcclCommunicator nccl(world, nullptr, backend, "calibrate", /*p2p=*/true);
    c.collectives = probe_nccl_sweep(backend, nccl, o.sweep, phase(o.progress, 0.55, 1.0));
  }
  if (o.progress) o.progress(1.0, "fitting");
  for (const auto& m : r.gemm_all) c.all_verified = c.all_verified && (!m.supported || m.verified);
  for (const auto& m : c.collectives) c.all_verified = c.all_verified && m.verified;
  c.all_verified = c.all_verified && c.memory.verified;
  fit_all(r);
  return r;
}

}  // namespace meshplan::exec
