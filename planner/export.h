// Exports of one configuration to the launchers people use: Megatron-LM command-line arguments
// (a sourceable bash array) and a DeepSpeed ds_config.json. Plain text, deterministic.
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Bash snippet defining MEGATRON_ARGS=( ... ) for pretrain_gpt.py: parallel sizes
/// (--tensor-model-parallel-size, --pipeline-model-parallel-size,
/// --num-layers-per-virtual-pipeline-stage), batch (--micro-batch-size, --global-batch-size),
/// --sequence-parallel, recomputation (--recompute-granularity/--recompute-method),
/// --use-distributed-optimizer (ZeRO >= 1), --overlap-grad-reduce, precision, and the model shape.
/// Also --hidden-dropout/--attention-dropout (0.0 unless the model trains with dropout: Megatron's
/// default is 0.1) and --main-grads-dtype fp32. Assumes Megatron runs `c` (see megatron_export).
std::string megatron_args(const Problem& p, const ParallelConfig& c);

/// megatron_args after checking that Megatron-LM runs `c` (validate_framework under megatron: no
/// ZB-H1/GPipe, no ZeRO-2/3) and that the dtype has a flag; otherwise the one-line Error.
/// Layers that do not split evenly over pp*v chunks get --pipeline-model-parallel-layout.
Result<std::string> megatron_export(const Problem& p, const ParallelConfig& c);
/// megatron_export's checks alone: Megatron-LM runs `c` (validate_framework under megatron), the dtype
/// has a flag, and the CP exchange is one of Megatron's.
Result<bool> check_megatron(const Problem& p, const ParallelConfig& c);

/// ds_config.json: train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps
/// x DP (DP = gpus / (tp*pp)), bf16/fp16, zero_optimization (stage, overlap_comm, ...),
/// activation_checkpointing when recomputing, gradient_clipping. Only keys DeepSpeed knows.
std::string deepspeed_config_json(const Problem& p, const ParallelConfig& c);

}  // namespace meshplan
