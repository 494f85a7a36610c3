// Multi-token prediction (DeepSeek-V3 report sec. 2.2; Megatron-Core --mtp-num-layers): who trains it.
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Errors for a model with mtp_layers > 0 that this job cannot train: Megatron-Core's
/// MultiTokenPredictionBlock is what Megatron-LM and NeMo / Megatron-Bridge run
/// (megatron/core/transformer/multi_token_prediction.py); DeepSpeed, PyTorch FSDP, torchtitan and
/// meshplan's executor have no MTP module. `where` names the origin (command line, plan file).
ErrorList validate_mtp_job(const ModelSpec& model, const Job& job, const std::string& where);

}  // namespace meshplan
