// Megatron-Core's edge DDP bucket group and the collectives of it no compute hides (ddp_edge_bucket.h).
#include "costmodel/ddp_edge_bucket.h"

#include <algorithm>

#include "core/job_features.h"
#include "core/megatron_overlap.h"
#include "costmodel/context_parallel.h"
#include "costmodel/grad_accumulation.h"
#include "costmodel/memory.h"
#include "costmodel/pipeline.h"

namespace meshplan {

double ddp_bucket_params(const Problem& p, const ParallelConfig& cfg) {
  const double knob = p.job.knobs.ddp_bucket_params;
  return knob > 0 ? knob : std::max(40e6, 1e6 * cfg.dp);
}

namespace {

// One buffer's bucket filling: add() takes each parameter tensor's size per GPU in backward order; last() is
// the size of the bucket the walk ends in (the one closed last when the final tensor closed it).
struct Filler {
  double limit = 0, open = 0, last_closed = 0;
  void add(double n) {
    open += n;
    if (open >= limit) {
      last_closed = open;
      open = 0;
    }
  }
  double last() const { return open > 0 ? open : last_closed; }
};

}  // namespace

EdgeBucket edge_bucket(const Problem& p, const ParallelConfig& cfg) {
  const ModelSpec& m = p.model;
  const double w = param_bytes(p.job).weights;
  const double norms = m.layer_norm_parameters();
  const double linear = layer_parameters_per_gpu(m, cfg.tp) - norms;  // the mean layer's TP-local weights
  const double attention = std::min(linear, m.attention_parameters() / cfg.tp);
  const double mlp = linear - attention;
  const int layers = chunk_layers(m, cfg, 0);
  const bool has_head = cfg.pp * std::max(1, cfg.virtual_stages) == 1;
  const double head = has_head ? head_parameters_per_gpu(m, cfg) : 0.0;
  const double embedding = embedding_parameters_per_gpu(m, cfg.tp);
  const bool fp8 = fp8_param_gather_on(p.job);
  Filler f{ddp_bucket_params(p, cfg)};
  EdgeBucket out;
  if (fp8) {
    // Linear weights in the FP8 buffer; embedding, head and norms in the 16-bit one, all of which joins
    // the last FP8 bucket's group.
    for (int l = 0; l < layers; ++l) {
      f.add(mlp);
      f.add(attention);
    }
    const double fp8_part = layers > 0 ? f.last() : 0.0;
    const double wide = head + layers * norms + embedding;
    out.params = fp8_part + wide;
    const double fp8_bytes = p.job.fp8 == Fp8Recipe::Mxfp8 ? w : 1.0;  // fp8_params.h param_gather_bytes
    out.gather_bytes = fp8_part * fp8_bytes + wide * w;
  } else {
    if (head > 0) f.add(head);
    for (int l = 0; l < layers; ++l) {
      f.add(mlp);
      f.add(attention + norms);
    }
    f.add(embedding);
    out.params = f.last();
    out.gather_bytes = out.params * w;
  }
  out.reduce_bytes = out.params * grad_reduce_bytes_per_param(p);
  return out;
}

bool edge_bucket_applies(const Problem& p, const ParallelConfig& cfg) {
  return p.job.knobs.megatron_core_model_code && cfg.zero_stage <= 1 && grad_group_size(cfg) > 1 &&
         cfg.dp_overlap && p.job.compression == GradCompression::None;
}

EdgeExposure edge_bucket_exposure(const Problem& p, const ParallelConfig& cfg, const GroupPlacement& g) {
  if (!edge_bucket_applies(p, cfg)) return {};
  const HardwareProfile& hw = p.hardware;
  const EdgeBucket e = edge_bucket(p, cfg);
  const bool all_reduce = cfg.zero_stage == 0 || p.job.knobs.dp_all_reduce;
  EdgeExposure out;
  out.reduce_s = all_reduce ? all_reduce_s(hw, g, e.reduce_bytes) : reduce_scatter_s(hw, g, e.reduce_bytes);
  if (param_gather_overlap_on(p.job, cfg)) out.gather_s = all_gather_s(hw, g, e.gather_bytes);
  return out;
}

}  // namespace meshplan
