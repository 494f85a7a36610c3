// Selftest report helpers: the error metric, the table, tolerance per GEMM precision.
#include "executor/selftest/selftest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace meshplan::exec {

bool SelftestReport::ok() const { return first_failure() == nullptr && !rows.empty(); }

const SelftestRow* SelftestReport::first_failure() const {
  for (const SelftestRow& r : rows) {
    if (!r.ok) return &r;
  }
  return nullptr;
}

SelftestRow compare_outputs(const std::string& name, const std::string& shape, const std::vector<float>& got,
                            const std::vector<float>& want, double tol, double floor) {
  SelftestRow row{name, shape, 0, 0, tol, false};
  double ref = floor;
  bool finite = got.size() == want.size();
  for (size_t i = 0; finite && i < got.size(); ++i) {
    if (!std::isfinite(got[i]) && std::isfinite(want[i])) finite = false;
    row.max_abs_error = std::max(row.max_abs_error, std::fabs(static_cast<double>(got[i]) - want[i]));
    ref = std::max(ref, std::fabs(static_cast<double>(want[i])));
  }
  if (!finite) {  // a NaN/Inf the reference does not have, or a size mismatch: never ok
    row.max_abs_error = row.max_rel_error = INFINITY;
    return row;
  }
  row.max_rel_error = ref > 0 ? row.max_abs_error / ref : row.max_abs_error;
  row.ok = row.max_rel_error <= tol;
  return row;
}

std::string selftest_table(const SelftestReport& report) {
  size_t wname = 4, wshape = 5;
  for (const SelftestRow& r : report.rows) {
    wname = std::max(wname, r.name.size());
    wshape = std::max(wshape, r.shape.size());
  }
  std::ostringstream os;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-*s  %-*s  %13s  %13s  %9s  %s\n", static_cast<int>(wname), "name",
                static_cast<int>(wshape), "shape", "max abs error", "max rel error", "tolerance", "ok");
  os << buf;
  for (const SelftestRow& r : report.rows) {
    std::snprintf(buf, sizeof(buf), "%-*s  %-*s  %13.3e  %13.3e  %9.1e  %s\n", static_cast<int>(wname),
                  r.name.c_str(), static_cast<int>(wshape), r.shape.c_str(), r.max_abs_error, r.max_rel_error,
                  r.tolerance, r.ok ? "ok" : "MISMATCH");
    os << buf;
  }
  return os.str();
}

double selftest_gemm_tolerance(const std::string& precision) {
  if (precision == "fp32") return 1e-5;
  if (precision == "tf32") return 2e-3;
  return 2e-2;  // bf16 inputs (8 significant bits), fp32 accumulation
}

void set_selftest_attention_tolerances(SelftestOptions& o, const std::string& kernel) {
  if (kernel == "cudnn") {
    o.attention_tolerance = 2e-2;
    o.attention_lse_tolerance = 2e-2;
    o.attention_grad_tolerance = 5e-2;
  } else {
    o.attention_tolerance = 1e-4;
    o.attention_lse_tolerance = 1e-5;
    o.attention_grad_tolerance = 1e-4;
  }
}

}  // namespace meshplan::exec
