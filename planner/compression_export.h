// What the framework exports do with a compressed data-parallel gradient reduction (--grad-compression).
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Which exports can run the job's gradient compression; the one-line Error names the method and
/// the export otherwise. DeepSpeed runs 1-bit Adam and 1-bit LAMB as optimizers (deepspeed/runtime/
/// engine.py _configure_basic_optimizer: ONEBIT_ADAM_OPTIMIZER / ONEBIT_LAMB_OPTIMIZER, both asserting
/// "not compatible with ZeRO", which validate_job already enforces) and has no PowerSGD or top-k
/// reduction. Megatron-LM, NeMo, FSDP and torchtitan expose none of the four (their gradient
/// reduction is a plain all-reduce / reduce-scatter): every compressed job is refused there.
Result<bool> check_export_compression(const std::string& kind, const Problem& p);

/// The ds_config.json "optimizer" block for 1-bit Adam / 1-bit LAMB: type OneBitAdam or OneBitLamb,
/// params freeze_step (the uncompressed warm-up, costmodel/grad_compression.h kOneBitFreezeStep =
/// deepspeed/runtime/fp16/onebit/adam.py's default 100000), cuda_aware false, comm_backend_name
/// "nccl" (the class defaults, written so the user sees them). Two-space indented, ending with ",\n";
/// empty when the job has no 1-bit compression. Learning rate and betas stay the training script's.
std::string deepspeed_compression_json(const Problem& p);

}  // namespace meshplan
