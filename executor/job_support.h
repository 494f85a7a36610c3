// Which job features `meshplan run` trains: the others are refused, so that its prediction is of the run that happens.
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// The executor trains its Llama-style model (executor/model) with the plan's layout, recompute mode,
/// context-parallel ring and expert parallelism. A plan whose job carries a feature of another stack's
/// code path would be predicted with that feature while the executor trains without it, so each is an
/// Error naming the plan key and the numbers: an FP8 recipe, a compressed DP reduction, Megatron-Core's
/// recompute modules, multi-token prediction, the flex MoE dispatcher, the EP all-to-all overlap, activation
/// offloading, TP communication overlap, the overlapped parameter gather, the op-fuser expert MLP,
/// torchtitan's activation-checkpoint policies and CP exchanges other than the p2p ring. Appended to `e`.
void check_executor_job(const Problem& p, const std::string& where, ErrorList& e);

}  // namespace meshplan
