// Which frameworks train multi-token prediction (core/mtp_config.h).
#include "core/mtp_config.h"

#include "core/framework.h"

namespace meshplan {

ErrorList validate_mtp_job(const ModelSpec& m, const Job& job, const std::string& w) {
  ErrorList e;
  if (m.mtp_layers <= 0) return e;
  if (job.framework != Framework::Megatron && job.framework != Framework::Nemo)
    e.push_back(make_error(w, "mtp_layers", std::to_string(m.mtp_layers),
                           std::string("is Megatron-Core's multi-token prediction (--mtp-num-layers); framework ") +
                               to_string(job.framework) + " does not train it",
                           "add --framework megatron or nemo, or --mtp-layers 0"));
  return e;
}

}  // namespace meshplan
