// Calibration: probes in sequence (GEMM, memory, collectives), host facts, fits, the profile.
#include "executor/calibrate/calibration.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <fstream>
#include <sstream>

#include "executor/checkpoint/shard_file.h"
#include "executor/tensor.h"
#include "executor/train/rank_agreement.h"

namespace meshplan::exec {

namespace {

std::string host_name() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

double mem_total_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  while (in >> key) {
    if (key == "MemTotal:") {
      in >> kb;
      return kb * 1024.0;
    }
    std::getline(in, key);
  }
  return 0;
}

int ranks_on_my_host(Communicator& world, const std::string& host) {
  const uint64_t mine = fnv1a64(host.data(), host.size()) & ((1ull << 48) - 1);
  int same = 0;
  for (uint64_t h : all_gather_u64(world, mine)) same += h == mine;
  return same;
}

// Progress reporting of one phase inside [begin, end) of the whole run.
ProgressFn phase(const ProgressFn& p, double begin, double end) {
  if (!p) return nullptr;
  return [p, begin, end](double f, const std::string& what) { p(begin + f * (end - begin), what); };
}

void fit_all(CalibrationResult& r) {
  const std::vector<GemmSample> g = gemm_samples(r.gemm);
  r.peak_flops = peak_flops_of(g);
  r.gemm_fit = fit_gemm(g);
  r.gemm_curve = gemm_efficiency_curve(g, r.peak_flops);
  const std::vector<CollectiveSample> c = collective_samples(r.collectives);
  r.link = fit_link(c);
  for (Collective op : {Collective::AllReduceRing, Collective::AllGather, Collective::ReduceScatter,
                        Collective::PointToPoint}) {
    std::vector<CollectiveSample> one = samples_of(c, op);
    if (one.size() >= 2) r.per_collective[op] = fit_link(one);
  }
}

// The soak of the CPU backend: y = x W^T of the sweep's largest shape, its burst time measured
// right before (the sweep's time is the mean of three layouts).
SoakMeasurement soak_largest_gemm(Backend& backend, Communicator& world, const GemmShape& s, double soak_s,
                                  double target_s) {
  Tensor a(backend, DType::F32, {s.M, s.K}), b(backend, DType::F32, {s.N, s.K}), c(backend, DType::F32, {s.M, s.N});
  backend.fill(a.f32(), 0.5f, a.numel());
  backend.fill(b.f32(), 0.25f, b.numel());
  auto call = [&] {
    backend.gemm(false, true, s.M, s.N, s.K, 1.0f, a.f32(), b.f32(), 0.0f, c.f32());
    backend.synchronize();
  };
  const double burst = time_local_call(call, target_s, 200);
  auto batch = [&](int n) {
    const double t0 = probe_now_s();
    for (int i = 0; i < n; ++i) call();
    return probe_now_s() - t0;
  };
  return run_soak_probe(world, batch, burst, soak_s);
}

}  // namespace

CalibrationResult run_calibration(Backend& backend, Communicator& world, const CalibrationOptions& o) {
  assert(world.size() >= 2);
  CalibrationResult r;
  r.ranks = world.size();
  r.host = host_name();
  r.ranks_per_node = ranks_on_my_host(world, r.host);
  r.cpu_name = cpu_model_name();
  r.host_memory_bytes = mem_total_bytes();
  r.gemm = run_gemm_probe(backend, world, default_gemm_shapes(o.gemm_max_n), o.gemm_target_s,
                          phase(o.progress, 0.0, 0.35));
  if (o.soak_s > 0.0 && !r.gemm.empty()) {
    if (o.progress) o.progress(0.35, "sustained-clock soak");
    r.soak = soak_largest_gemm(backend, world, r.gemm.back().shape, o.soak_s, o.gemm_target_s);
  }
  if (o.progress) o.progress(0.35, "memory bandwidth");
  r.memory = run_memory_probe(backend, world, o.memory_bytes, o.gemm_target_s * 4);
  if (o.progress) o.progress(0.38, "element-wise kernels");
  r.elementwise = run_elementwise_probe(backend, world, o.memory_bytes, o.gemm_target_s * 4);
  r.collectives = run_collective_probe(world, o.sweep, phase(o.progress, 0.4, 1.0));
  if (o.progress) o.progress(1.0, "fitting");
  for (const auto& m : r.gemm) r.all_verified = r.all_verified && m.verified;
  for (const auto& m : r.collectives) r.all_verified = r.all_verified && m.verified;
  r.all_verified = r.all_verified && r.memory.verified && r.elementwise.verified;
  fit_all(r);
  return r;
}

HardwareProfile calibrated_profile(const CalibrationResult& r, const std::string& name,
                                   const std::string& date, const std::string& tool_version) {
  HardwareProfile hw;
  hw.name = name;
  std::ostringstream src;
  src << "meshplan calibrate --backend cpu: " << r.ranks << " MPI ranks on " << r.host << " (" << r.cpu_name
      << "); GEMM sweep through the CPU backend (Eigen, fp32), axpy memory bandwidth, OpenMPI "
         "collective sweeps with alpha-beta least-squares fits; one node measured, so inter_node "
         "repeats the intra-node fit";
  hw.source = src.str();
  hw.provenance = Provenance{"calibrated", date, r.host, tool_version};
  hw.gpu = r.cpu_name + " (one MPI rank)";
  hw.memory_bytes = r.host_memory_bytes / std::max(1, r.ranks_per_node);
  hw.reserved_memory_bytes = 0;
  hw.peak_flops["fp32"] = r.peak_flops;
  hw.hbm_bytes_per_s = r.memory.bytes_per_s;
  hw.hbm_efficiency = std::min(1.0, r.elementwise.bytes_per_s / r.memory.bytes_per_s);
  hw.gemm_efficiency = r.gemm_curve;
  hw.sustained_clock_fraction = r.soak.fraction;
  hw.other_memory_bytes = 0;
  hw.gpus_per_node = r.ranks_per_node;
  hw.intra_node = r.link.link;
  hw.inter_node = r.link.link;
  hw.dollars_per_gpu_hour = 0;
  return hw;
}

}  // namespace meshplan::exec
