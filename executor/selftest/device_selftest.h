// The selftest of a named backend against the CPU reference: what `meshplan selftest` and the
// start of `run`/`calibrate --backend cuda` call. "cuda" checks every kernel, cuBLASLt GEMM and an
// NCCL all-reduce on this process's device; "cpu" checks the fast CPU kernels against their twins.
#pragma once
#include <string>

#include "core/error.h"
#include "executor/backend.h"
#include "executor/selftest/selftest.h"

namespace meshplan::exec {

struct DeviceSelftest {
  std::string device;          // "cuda:0 (NVIDIA H100 80GB HBM3)" or "cpu (Eigen)"
  std::string gemm_precision;  // GEMM math checked ("bf16", "fp32")
  std::string attention_kernel;  // attention checked ("cudnn", "reference")
  SelftestReport report;       // rows up to and including the first mismatch
  std::string device_error;    // a DeviceError's one line when a library call failed, else empty
  bool ok() const { return device_error.empty() && report.ok(); }
};

/// Error (one line, field --backend) when the backend cannot be made: unknown name, a build
/// without CUDA, no device. Otherwise the result, ok or not.
Result<DeviceSelftest> run_named_selftest(const std::string& backend_name);

/// The selftest of an existing backend (the one `run` will train with); `reference` is the CPU
/// reference (naive GEMM, scalar attention).
DeviceSelftest run_selftest_on(Backend& backend);

/// One line naming the first failure: "attention backward dq (B=.. T=..): max rel error 3.1e-02 >
/// tolerance 1.0e-04 on cuda:0 (...)" or the device error; empty when ok.
std::string selftest_failure_line(const DeviceSelftest& s);

}  // namespace meshplan::exec
