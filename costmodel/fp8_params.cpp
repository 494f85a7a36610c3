// FP8 primary weights: the 16-bit copy they remove and the bytes of their all-gather (fp8_params.h).
#include "costmodel/fp8_params.h"

#include <algorithm>

#include "core/job_features.h"
#include "core/moe_config.h"
#include "costmodel/context_parallel.h"
#include "costmodel/fp8.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/moe_layout.h"

namespace meshplan {

bool fp8_primary_weights(const Problem& p) { return fp8_param_gather_on(p.job); }  // core/job_features.h

namespace {
double dense_linear_parameters(const Problem& p, const ParallelConfig& cfg) {
  return layer_parameters_per_gpu(p.model, cfg.tp) - p.model.layer_norm_parameters();
}
}  // namespace

double fp8_param_saved_bytes(const Problem& p, const ParallelConfig& cfg, int layers) {
  if (!fp8_primary_weights(p)) return 0.0;
  const double w = param_bytes(p.job).weights;
  const bool sharded = cfg.zero_stage >= 3;
  const double per_param = sharded ? w - fp8_weight_bytes_per_param(p.job.fp8, fp8_gemm_needs_transposes(p.hardware)) : w;
  const double d = sharded ? static_cast<double>(zero_shard_size(cfg)) : 1.0;
  const double de = sharded ? static_cast<double>(std::max(1, expert_data_parallel(cfg))) : 1.0;
  return layers * std::max(0.0, per_param) *
         (dense_linear_parameters(p, cfg) / d + expert_layer_parameters_per_gpu(p.model, cfg) / de);
}

double param_gather_bytes(const Problem& p, const ParallelConfig& cfg, double params, int layers) {
  const double w = param_bytes(p.job).weights;
  if (!fp8_primary_weights(p) || p.job.fp8 == Fp8Recipe::Mxfp8) return params * w;
  const double linear = std::min(params, layers * dense_linear_parameters(p, cfg));
  return (params - linear) * w + linear * 1.0;
}

}  // namespace meshplan
