// Exports per framework (--export megatron|deepspeed|fsdp|torchtitan|nemo): the checked entry point
// that refuses a configuration the framework cannot run, and the torchtitan TOML and NeMo YAML.
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// An export's text (stdout) and what the user must know that the format cannot say (stderr; may be
/// empty), e.g. DeepSpeed's need for a Megatron mpu when tp*pp > 1.
struct ExportText {
  std::string text;
  std::string note;
};

/// True for megatron, deepspeed, fsdp, torchtitan, nemo.
bool is_framework_export(const std::string& kind);
/// The framework an export kind is for (kind must satisfy is_framework_export).
Framework export_framework(const std::string& kind);

/// The export of `c` for `kind`, or an Error (one line) when that framework cannot run `c`
/// (validate_framework under it) or the format cannot state what the cost assumed.
Result<ExportText> export_for_framework(const std::string& kind, const Problem& p, const ParallelConfig& c);
/// The checks of export_for_framework alone (no text): what the launch scripts that run `kind` ask.
Result<bool> check_framework_export(const std::string& kind, const Problem& p, const ParallelConfig& c);

/// torchtitan job config (TOML, the [training]/[parallelism]/[activation_checkpoint] keys of
/// torchtitan/config/job_config.py); with `fsdp_only` the header names plain FSDP (tp = pp = 1).
std::string torchtitan_toml(const Problem& p, const ParallelConfig& c, bool fsdp_only);

/// NeMo (Megatron Core) model config YAML: trainer and model keys of megatron_gpt_config.yaml.
std::string nemo_yaml(const Problem& p, const ParallelConfig& c);

}  // namespace meshplan
