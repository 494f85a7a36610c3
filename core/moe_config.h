// Layout rules for expert parallelism (EP) and expert tensor parallelism (ETP), after Megatron-Core.
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Expert-data-parallel degree of the expert layers: Megatron-Core "MoE parallel folding" re-folds
/// the non-pipeline ranks tp*cp*dp of a pipeline stage as etp*ep*edp (expert layers) while the
/// attention part keeps tp*cp*dp. 0 when ep*etp does not divide tp*cp*dp (an invalid layout).
int expert_data_parallel(const ParallelConfig& cfg);

/// Every reason the ep/etp part of `cfg` cannot run `p` (empty = valid):
///  - ep or etp > 1 on a dense model (megatron/training/arguments.py: "num_experts must be non
///    None to use expert model parallelism");
///  - num_experts % ep != 0 (arguments.py: num_moe_experts % expert_model_parallel_size == 0);
///  - ep*etp not dividing tp*cp*dp (the expert group must tile the folded world);
///  - etp groups (etp consecutive ranks) straddling nodes, as TP, without --allow-tp-across-nodes;
///  - an MoE model with tp > 1 but no sequence parallelism (transformer_config.py: "When using
///    expert parallelism and tensor parallelism, sequence parallelism must be used"; arguments.py
///    asserts it for every MoE model with tp > 1);
///  - ZeRO-3 with experts under hybrid sharding (--shard-group): ZeRO-3 shards the experts over
///    the expert-data group (costmodel/expert_fsdp.h, torchtitan's FSDP2 over routed experts), but an
///    HSDP split of that group is not costed, so it is refused rather than mis-costed. DeepSpeed
///    refuses ZeRO-3 with MoE itself (core/framework.cpp).
///  - --moe-a2a-overlap (FrameworkKnobs::moe_a2a_overlap) where Megatron-Core refuses it
///    (transformer_config.py, `if self.overlap_moe_expert_parallel_comm:`): a dense model or ep = 1
///    ("only supported with expert model parallelism"), pp > 1 without a virtual pipeline
///    ("virtual_pipeline_model_parallel_size must be specified when pipeline_model_parallel_size > 1"),
///    and full recompute ("Disable full recomputation"). That only Megatron-LM and NeMo run it is
///    checked where the job is built (cli/feature_options.cpp), not per configuration.
///  - a flex dispatcher (FrameworkKnobs::moe_dispatcher deepep / hybridep) with etp > 1, which
///    costmodel/moe_dedup_dispatch.h does not cost.
ErrorList validate_moe_config(const Problem& p, const ParallelConfig& cfg, const std::string& where);

}  // namespace meshplan
