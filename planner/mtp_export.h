// What the framework exports add for multi-token prediction, and which exports refuse it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Megatron-LM's --mtp-num-layers N (megatron/training/arguments.py; Megatron-Core
/// TransformerConfig.mtp_num_layers) when the model trains N > 0 MTP modules; the loss weight
/// --mtp-loss-scaling-factor keeps Megatron's default (0.1, which Megatron-Bridge's DeepSeek-V3
/// recipe also sets). Empty otherwise. Pairs of (flag, value).
std::vector<std::pair<std::string, std::string>> megatron_mtp_flags(const Problem& p);

/// NeMo model.mtp_num_layers (the same TransformerConfig field), two-space indented; "" without MTP.
std::string nemo_mtp_keys(const Problem& p);

/// DeepSpeed, FSDP and torchtitan exports have no MTP module to train: one-line Error naming
/// mtp_layers for a model that trains them under `--export kind`; true otherwise.
Result<bool> check_mtp_export(const std::string& kind, const Problem& p);

}  // namespace meshplan
