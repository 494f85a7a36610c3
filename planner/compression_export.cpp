// Gradient compression in the framework exports: DeepSpeed's 1-bit optimizers, refusals elsewhere.
#include "planner/compression_export.h"

#include "core/job_features.h"
#include "costmodel/grad_compression.h"

namespace meshplan {

Result<bool> check_export_compression(const std::string& kind, const Problem& p) {
  const GradCompression g = p.job.compression;
  if (g == GradCompression::None) return true;
  const std::string where = "--export " + kind;
  if (kind == "deepspeed") {
    if (g == GradCompression::OneBitAdam || g == GradCompression::OneBitLamb) return true;
    return make_error(where, "--grad-compression", to_string(g),
                      "DeepSpeed has no " + std::string(g == GradCompression::PowerSgd ? "PowerSGD" : "top-k") +
                          " gradient reduction (its compressed ones are the 1-bit Adam and 1-bit LAMB optimizers)",
                      "plan with --grad-compression onebit-adam or onebit-lamb, or none");
  }
  return make_error(where, "--grad-compression", to_string(g),
                    kind + " has no compressed gradient reduction",
                    "plan with --grad-compression none, or onebit-adam/onebit-lamb and --export deepspeed");
}

std::string deepspeed_compression_json(const Problem& p) {
  const GradCompression g = p.job.compression;
  if (g != GradCompression::OneBitAdam && g != GradCompression::OneBitLamb) return "";
  return std::string("  \"optimizer\": {\n") + "    \"type\": \"" +
         (g == GradCompression::OneBitAdam ? "OneBitAdam" : "OneBitLamb") + "\",\n" +
         "    \"params\": {\"freeze_step\": " + std::to_string(kOneBitFreezeStep) +
         ", \"cuda_aware\": false, \"comm_backend_name\": \"nccl\"}\n" + "  },\n";
}

}  // namespace meshplan
