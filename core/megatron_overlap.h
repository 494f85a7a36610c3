// Megatron-Core's two communication overlaps a job can ask for (--tp-comm-overlap, --overlap-param-gather):
// where a layout runs them, and the layouts Megatron refuses them on.
#pragma once
#include <string>

#include "core/parallel_config.h"

namespace meshplan {

/// FrameworkKnobs::tp_comm_overlap on a layout that runs it: TP > 1 with sequence parallelism. At TP 1
/// there is no TP collective to overlap (and Megatron, which turns sequence parallelism off at TP 1,
/// would refuse the flag), so the export leaves it out there.
bool tp_comm_overlap_on(const Job& job, const ParallelConfig& c);

/// FrameworkKnobs::param_gather_overlap on a layout whose costs it changes: the distributed optimizer's
/// all-gather of the updated weights after the step (ZeRO 1) over more than one data-parallel rank.
bool param_gather_overlap_on(const Job& job, const ParallelConfig& c);

/// Empty when the layout can run --tp-comm-overlap, else why not. Megatron-LM asserts "Tensor parallel
/// communication/GEMM overlap can happen only when sequence parallelism is enabled"
/// (megatron/training/arguments.py validate_args, at d98e8a64d).
std::string tp_comm_overlap_rule(const Job& job, const ParallelConfig& c);

/// Empty when the layout can run --overlap-param-gather, else why not. Megatron-LM asserts
/// "--overlap-param-gather only supported with distributed optimizer, megatron fsdp, or dist_muon" (ZeRO 1:
/// the stages Megatron and NeMo run here are 0 and 1) and "Must use --overlap-param-gather with
/// --overlap-grad-reduce" (DP overlap on).
std::string param_gather_overlap_rule(const Job& job, const ParallelConfig& c);

}  // namespace meshplan
