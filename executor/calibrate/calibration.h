// `meshplan calibrate --backend cpu`: runs the probes on every rank, fits the cost model's
// parameters (costmodel/fit.h) and builds a HardwareProfile with provenance; raw curves kept.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/hardware_profile.h"
#include "costmodel/fit.h"
#include "executor/backend.h"
#include "executor/calibrate/collective_probe.h"
#include "executor/calibrate/elementwise_probe.h"
#include "executor/calibrate/gemm_probe.h"
#include "executor/calibrate/memory_probe.h"
#include "executor/calibrate/soak_probe.h"

namespace meshplan::exec {

struct CalibrationOptions {
  int64_t gemm_max_n = 768;           // largest square GEMM side of the sweep
  double gemm_target_s = 0.05;        // repeats per GEMM shape last about this long
  int64_t memory_bytes = 64 << 20;    // per array of the bandwidth probe (far beyond the caches)
  double soak_s = 0;                  // run the sweep's largest GEMM back to back this long (0 = no soak)
  CollectiveSweep sweep;
  ProgressFn progress;                // rank 0: progress bar
};

struct CalibrationResult {
  int ranks = 1;
  int ranks_per_node = 1;             // ranks sharing this host name
  std::string host;
  std::string backend = "cpu";        // "cpu" or "cuda": what the probes ran on (report wording)
  std::string cpu_name;               // /proc/cpuinfo "model name" (cuda: the GPU's name)
  double host_memory_bytes = 0;       // /proc/meminfo MemTotal
  std::vector<GemmMeasurement> gemm;
  SoakMeasurement soak;               // sustained / burst rate of the largest GEMM (fraction 1: not run)
  BandwidthMeasurement memory;
  ElementwiseMeasurement elementwise;
  std::vector<CollectiveMeasurement> collectives;
  // Fits.
  double peak_flops = 0;              // best achieved GEMM rate (fp32)
  GemmFit gemm_fit;
  std::vector<EfficiencyPoint> gemm_curve;
  LinkFit link;                       // all collectives together: what the profile's links hold
  std::map<Collective, LinkFit> per_collective;
  bool all_verified = true;
};

/// Collective over `world` (needs >= 2 ranks for the link fit; asserted — the CLI checks first).
CalibrationResult run_calibration(Backend& backend, Communicator& world, const CalibrationOptions& o);

/// The profile plan/estimate/simulate read (core/io schema): fp32 peak and GEMM curve, axpy
/// bandwidth with hbm_efficiency = element-wise kernels' bytes/s over it (at most 1), alpha-beta links of the fit (one node: the
/// inter-node link repeats the intra-node fit), memory = host memory / ranks per node,
/// sustained_clock_fraction = the soak's (1 without one).
HardwareProfile calibrated_profile(const CalibrationResult& r, const std::string& name,
                                   const std::string& date, const std::string& tool_version);

}  // namespace meshplan::exec
