// Backend selftest: runs every kernel and library call the executor uses on small shapes on a device
// backend and on the CPU reference with the same inputs, and compares them within stated
// tolerances (`meshplan selftest`, and the quick check at the start of `run`/`calibrate --backend cuda`).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "executor/backend.h"

namespace meshplan::exec {

/// One compared output: max |device - reference|, that over max(max |reference|, floor), the
/// tolerance on the relative figure, and whether it holds.
struct SelftestRow {
  std::string name;   // "gemm NT", "attention backward dq", ...
  std::string shape;  // "M=64 N=48 K=80"
  double max_abs_error = 0;
  double max_rel_error = 0;
  double tolerance = 0;
  bool ok = false;
};

struct SelftestReport {
  std::vector<SelftestRow> rows;
  bool ok() const;
  /// The first row that does not hold, or nullptr.
  const SelftestRow* first_failure() const;
};

struct SelftestOptions {
  /// Relative tolerance of GEMMs: the device's GEMM math (2e-2 for bf16 inputs with fp32
  /// accumulation over K <= 128, 2e-3 for tf32, 1e-5 for fp32).
  double gemm_tolerance = 2e-2;
  /// Relative tolerances of attention: output and lse, and gradients (over max(|ref|, 1)). 1e-4 /
  /// 1e-5 / 1e-4 for fp32 kernels (online vs two-pass softmax); cuDNN's SDPA rounds q, k, v, o, dO
  /// and its outputs to bf16 (2^-9 relative each): 2e-2 / 2e-2 / 5e-2.
  double attention_tolerance = 1e-4;
  double attention_lse_tolerance = 1e-5;
  double attention_grad_tolerance = 1e-4;
  /// Stop after the first check that does not hold (its rows are the last in the report).
  bool stop_at_first_failure = true;
  /// Extra checks appended by the caller (e.g. an NCCL all-reduce on the device): each returns rows.
  std::vector<std::function<std::vector<SelftestRow>(Backend& device, Backend& reference)>> extra;
};

/// Runs the checks (device first, then reference, on identical host inputs).
SelftestReport run_backend_selftest(Backend& device, Backend& reference, const SelftestOptions& options = {});

/// Compares `got` with `want`: the row for `name`/`shape` with tolerance `tol`; `floor` bounds the
/// denominator of the relative error from below (for references that are 0 in exact arithmetic).
SelftestRow compare_outputs(const std::string& name, const std::string& shape, const std::vector<float>& got,
                            const std::vector<float>& want, double tol, double floor = 0);

/// Fixed-width table: name, shape, max abs error, max rel error, tolerance, ok.
std::string selftest_table(const SelftestReport& report);

/// Tolerance of GEMMs for a precision name ("bf16", "bf16-copy", "tf32", "fp32").
double selftest_gemm_tolerance(const std::string& precision);
/// Sets the attention tolerances for an attention kernel name ("cudnn" or "reference").
void set_selftest_attention_tolerances(SelftestOptions& o, const std::string& kernel);

}  // namespace meshplan::exec
