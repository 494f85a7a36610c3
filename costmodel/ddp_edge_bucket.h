// Megatron-Core's DDP gradient buckets at the two edges of a step: the bucket group holding the input
// embedding is reduced last (its gradient is the backward's last) and gathered first (the first forward
// needs it), so neither collective has compute left to hide behind.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/collectives.h"

namespace meshplan {

/// Parameters per DDP bucket: FrameworkKnobs::ddp_bucket_params, else Megatron-Core's default
/// max(40,000,000, 1,000,000 x dp) (megatron/core/distributed/distributed_data_parallel.py at d3391901
/// l.60-63 and 24bad8e6 l.68-69: dp without CP; "larger DP sizes need larger buckets to ensure
/// collectives do not become latency-bound").
double ddp_bucket_params(const Problem& p, const ParallelConfig& cfg);

/// The first model chunk's edge bucket group, per GPU. Megatron-Core fills buckets with the chunk's
/// parameters in reverse registration order (backward order: LM head when the chunk has it, the layers
/// last to first, the embedding last) and closes a bucket at the first parameter that brings it to the
/// bucket size (param_and_grad_buffer.py _ParamAndGradBuffer); what is left when the embedding is added
/// is the last bucket. Under FP8 primary weights (fp8_param_gather) the linear weights fill their own FP8
/// buffer and every 16-bit bucket (embedding, LM head, norms) joins the last FP8 bucket's group
/// (partition_buckets, param_and_grad_buffer.py l.1659-1720 at 24bad8e6). Per layer the walk takes two
/// tensors, the MLP's weights then the attention's (with the norms), the model's mean layer.
struct EdgeBucket {
  double params = 0;        // parameters per GPU in the group
  double gather_bytes = 0;  // what its all-gather of the updated weights sends (1 byte for FP8 data)
  double reduce_bytes = 0;  // what its gradient reduce-scatter (or all-reduce) sends
};
EdgeBucket edge_bucket(const Problem& p, const ParallelConfig& cfg);

/// Whether the job's DP overlap runs through Megatron-Core's bucketed DDP: Megatron-Core code (megatron,
/// nemo: FrameworkKnobs::megatron_core_model_code), ZeRO 0-1, more than one rank reducing gradients, the DP
/// overlap on, no gradient compression.
bool edge_bucket_applies(const Problem& p, const ParallelConfig& cfg);

/// Seconds of the edge group's collectives no compute hides: its gradient reduction after the last
/// backward (reduce-scatter under ZeRO 1, all-reduce under ZeRO 0 or dp_all_reduce) and, under
/// --overlap-param-gather, its all-gather before the first forward (dispatched and waited in the first
/// module's forward pre-hook: param_and_grad_buffer.py l.538-598). 0 where edge_bucket_applies is false.
struct EdgeExposure {
  double reduce_s = 0;
  double gather_s = 0;
};
EdgeExposure edge_bucket_exposure(const Problem& p, const ParallelConfig& cfg, const GroupPlacement& g);

}  // namespace meshplan
