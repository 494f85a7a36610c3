// ZeRO-3 / FSDP over routed experts: expert weights sharded over the expert-data group and gathered
// per layer, their gradients reduce-scattered per layer (torchtitan's FSDP2 with EP).
#pragma once
#include "core/parallel_config.h"
#include "costmodel/collectives.h"
#include "costmodel/fsdp2_copies.h"
#include "costmodel/memory.h"

namespace meshplan {

/// True when a MoE job runs ZeRO-3 with an expert-data group of more than one GPU (and FSDP applied,
/// dp*cp > 1, as torchtitan applies it only then: ParallelDims.fsdp_enabled): every MoE layer's
/// local experts (E/ep of them, each cut etp ways) are sharded over edp = tp*cp*dp / (ep*etp) ranks
/// and gathered before each use, as torchtitan does (torchtitan/distributed/fsdp.py
/// apply_fsdp_to_decoder at b5bcd76c6: the block's routed experts take the `edp_mesh` ("efsdp",
/// dp_shard*cp*tp/ep ranks, tests/unit_tests/test_parallel_dims.py), everything else `dp_mesh`; with
/// EP it prefetches the next block explicitly in both passes). edp = 1 leaves the experts whole.
bool experts_fully_sharded(const Problem& p, const ParallelConfig& cfg);

/// The expert-data group: edp ranks, ep*etp apart (the expert layers re-fold the stage's tp*cp*dp
/// ranks as etp*ep*edp, core/moe_config.h).
GroupPlacement expert_data_group(const HardwareProfile& hw, const ParallelConfig& cfg);

/// Per mean layer and pass, seconds of the experts' collectives under experts_fully_sharded, else 0:
/// each MoE layer all-gathers its P_e = E/ep * expert_parameters / etp parameters (16-bit weight bytes)
/// and reduce-scatters their gradients (the job's reduce bytes per parameter, as the dense units) over
/// the expert-data group; the mean layer carries r = num_moe_layers / L of each (dense layers have no
/// routed experts). They join the block's own gather and reduce-scatter (costmodel/zero_comm.h), one
/// after the other on FSDP's all-gather and reduce-scatter streams.
struct ExpertLayerCollectives {
  double gather_s = 0;
  double reduce_s = 0;
};
ExpertLayerCollectives expert_layer_collectives(const Problem& p, const ParallelConfig& cfg);

/// Bytes of the gathered experts ZeRO-3 holds besides the shards: the current and the prefetched MoE
/// layer's local experts, 2 * P_e * weight bytes (as the dense part's two gathered layers); 0 unless
/// experts_fully_sharded.
double expert_gather_buffer_bytes(const Problem& p, const ParallelConfig& cfg);

/// FSDP2's copy-in / copy-out traffic for the experts of the mean layer (fsdp2_copies.h's formula
/// with P_e and the expert-data degree, weighted by r); 0 unless FSDP2's copies and
/// experts_fully_sharded. Under a pipeline that keeps stages gathered (fsdp2_pipeline.h) the same
/// bytes are shared out over the step's micro-batches as there.
Fsdp2CopyTimes expert_fsdp2_copy_times(const Problem& p, const ParallelConfig& cfg);

}  // namespace meshplan
