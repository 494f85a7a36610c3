// The job features the executor does not train (executor/job_support.h).
#include "executor/job_support.h"

#include "core/ac_policy.h"
#include "core/job_features.h"
#include "core/moe_dispatcher.h"
#include "core/cuda_graphs.h"
#include "core/recompute_modules.h"

namespace meshplan {

namespace {
void refuse(ErrorList& e, const std::string& where, const std::string& key, const std::string& value,
            const std::string& what) {
  e.push_back(make_error(where, key, value,
                         what + ", which meshplan run does not train (its prediction would price what does not run)",
                         "plan without it for meshplan run, or export the plan for the framework that runs it"));
}
}  // namespace

void check_executor_job(const Problem& p, const std::string& w, ErrorList& e) {
  const Job& j = p.job;
  const FrameworkKnobs& k = j.knobs;
  if (j.fp8 != Fp8Recipe::None) refuse(e, w, "fp8", to_string(j.fp8), "an FP8 recipe");
  if (j.compression != GradCompression::None)
    refuse(e, w, "grad_compression", to_string(j.compression), "a compressed gradient reduction");
  if (k.recompute_modules != 0)
    refuse(e, w, "recompute_modules", recompute_modules_text(k.recompute_modules), "Megatron-Core's recompute modules");
  if (k.cuda_graphs != 0) refuse(e, w, "cuda_graphs", cuda_graph_scopes_text(k.cuda_graphs), "Megatron-Core's CUDA graphs");
  if (p.model.mtp_layers > 0)
    refuse(e, w, "mtp_layers", std::to_string(p.model.mtp_layers), "multi-token prediction");
  if (k.moe_dispatcher != MoeDispatcher::AllToAll)
    refuse(e, w, "moe_dispatcher", to_string(k.moe_dispatcher), "Megatron-Core's flex dispatcher");
  if (k.moe_a2a_overlap) refuse(e, w, "moe_a2a_overlap", "true", "the overlapped expert all-to-all");
  if (k.activation_offload_layers > 0)
    refuse(e, w, "activation_offload_layers", std::to_string(k.activation_offload_layers), "activation offloading");
  if (k.tp_comm_overlap) refuse(e, w, "tp_comm_overlap", "true", "TP communication overlap");
  if (k.param_gather_overlap) refuse(e, w, "overlap_param_gather", "true", "the overlapped parameter gather");
  if (k.fused_grouped_mlp) refuse(e, w, "fused_grouped_mlp", "true", "the op-fuser expert MLP");
  if (j.ac_policy.kind != AcPolicyKind::Megatron)
    refuse(e, w, "ac_policy", to_string(j.ac_policy), "torchtitan's activation checkpointing");
  if (j.cp_comm != CpComm::P2p) refuse(e, w, "cp_comm", to_string(j.cp_comm), "a context-parallel exchange other than the p2p ring");
  if (k.cross_entropy == CrossEntropyKernel::FlashXentropy)
    refuse(e, w, "cross_entropy", to_string(k.cross_entropy), "flash-attn's cross entropy (llm-foundry's loss)");
  if (k.train_metric_cross_entropies > 0)
    refuse(e, w, "train_metric_cross_entropies", std::to_string(k.train_metric_cross_entropies),
           "Composer's train-metric cross entropies");
}

}  // namespace meshplan
