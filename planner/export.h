// Exports of one configuration to the launchers people use: Megatron-LM command-line arguments
// (a sourceable bash array) and a DeepSpeed ds_config.json. Plain text, deterministic.
#pragma once
#include <string>

#include "core/parallel_config.h"

namespace meshplan {

/// Bash snippet defining MEGATRON_ARGS=( ... ) for pretrain_gpt.py: parallel sizes
/// (--tensor-model-parallel-size, --pipeline-model-parallel-size,
/// --num-layers-per-virtual-pipeline-stage), batch (--micro-batch-size, --global-batch-size),
/// --sequence-parallel, recomputation (--recompute-granularity/--recompute-method),
/// --use-distributed-optimizer (ZeRO >= 1), --overlap-grad-reduce, precision, and the model shape.
/// Settings Megatron-LM has no flag for (GPipe, ZB-H1, ZeRO-3, a middle-heavy uneven split) are
/// stated in '#' comment lines inside the array.
std::string megatron_args(const Problem& p, const ParallelConfig& c);

/// ds_config.json: train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps
/// x DP (DP = gpus / (tp*pp)), bf16/fp16, zero_optimization (stage, overlap_comm, ...),
/// activation_checkpointing when recomputing, gradient_clipping. Only keys DeepSpeed knows.
std::string deepspeed_config_json(const Problem& p, const ParallelConfig& c);

}  // namespace meshplan
