// run_named_selftest / run_selftest_on: builds the backend, the CPU reference and the device-only
// extra checks (NCCL all-reduce over a group of one), turns a DeviceError into the result's line.
#include "executor/selftest/device_selftest.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "executor/backend_factory.h"
#include "executor/comm_local.h"
#include "executor/device_error.h"
#include "executor/tensor.h"

namespace meshplan::exec {

namespace {

/// NCCL over a group of one (host group: a SelfCommunicator): ncclCommInitRank and an all-reduce
/// SUM of device memory, which must leave the data unchanged.
std::vector<SelftestRow> check_nccl(Backend& device, Backend&) {
  auto comm = make_nccl_communicator(device, make_self_communicator(), "selftest", false);
  if (!comm) throw DeviceError("meshplan: " + comm.error().one_line());
  const int64_t n = 4097;
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i % 97) - 48.5f;
  Tensor t(device, DType::F32, {n});
  device.copy_from_host(t.data(), host.data(), static_cast<uint64_t>(n) * 4);
  (*comm)->all_reduce(t.f32(), n, ReduceOp::Sum);
  device.synchronize();
  std::vector<float> back(static_cast<size_t>(n));
  device.copy_to_host(back.data(), t.data(), static_cast<uint64_t>(n) * 4);
  return {compare_outputs("nccl all-reduce (group of 1)", "n=" + std::to_string(n), back, host, 0)};
}

std::string describe(Backend& backend) {
  const DeviceMemoryReport m = device_memory_report(backend);
  if (!m.is_device) return std::string(backend.name());
  return std::string(backend.name()) + " (" + m.device_name + ")";
}

}  // namespace

DeviceSelftest run_selftest_on(Backend& backend) {
  DeviceSelftest out;
  const bool is_cuda = std::string(backend.name()) == "cuda";
  // What this backend will run (`run --cuda-gemm/--cuda-attention`), not the defaults.
  const CudaOptions cuda = cuda_options_of(backend).value_or(CudaOptions{});
  out.gemm_precision = is_cuda ? to_string(cuda.gemm) : "fp32";
  CpuOptions ref_options;
  ref_options.naive_gemm = true;
  ref_options.reference_attention = true;
  std::unique_ptr<Backend> reference = make_cpu_backend(ref_options);
  SelftestOptions options;
  options.gemm_tolerance = selftest_gemm_tolerance(out.gemm_precision);
  out.attention_kernel = is_cuda ? to_string(effective_attention(cuda)) : "reference";
  set_selftest_attention_tolerances(options, out.attention_kernel);
  if (is_cuda) options.extra.push_back(check_nccl);
  try {
    out.device = describe(backend);
    out.report = run_backend_selftest(backend, *reference, options);
    backend.synchronize();
  } catch (const DeviceError& e) {
    out.device_error = e.what();
  }
  return out;
}

Result<DeviceSelftest> run_named_selftest(const std::string& backend_name) {
  auto made = make_backend(backend_name);
  if (!made) return made.error();
  return run_selftest_on(**made);
}

std::string selftest_failure_line(const DeviceSelftest& s) {
  if (!s.device_error.empty()) return s.device_error;
  const SelftestRow* bad = s.report.first_failure();
  if (bad == nullptr) return s.report.rows.empty() ? "meshplan: selftest ran no checks" : "";
  char buf[160];
  std::snprintf(buf, sizeof(buf), ": max rel error %.3e > tolerance %.1e on ", bad->max_rel_error, bad->tolerance);
  return "meshplan: selftest: " + bad->name + " (" + bad->shape + ")" + buf + s.device;
}

}  // namespace meshplan::exec
