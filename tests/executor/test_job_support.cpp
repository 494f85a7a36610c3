// What meshplan run refuses to train (executor/job_support.h): every job feature of another stack's code
// path, named by its plan key; a plain meshplan job passes.
#include <catch2/catch.hpp>

#include <string>

#include "../costmodel/fixtures.h"
#include "../costmodel/moe_fixtures.h"
#include "core/recompute_modules.h"
#include "executor/job_support.h"

using namespace meshplan;

namespace {
std::string refused_key(const Problem& p) {
  ErrorList e;
  check_executor_job(p, "plan.json", e);
  return e.size() == 1 ? e.front().field : (e.empty() ? "" : "several");
}
}  // namespace

TEST_CASE("meshplan run refuses each job feature it does not train, by plan key") {
  const Problem base = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096);
  CHECK(refused_key(base).empty());
  Problem p = base;
  p.job.fp8 = Fp8Recipe::Current;
  CHECK(refused_key(p) == "fp8");
  p = base;
  p.job.compression = GradCompression::PowerSgd;
  CHECK(refused_key(p) == "grad_compression");
  p = base;
  p.job.knobs.recompute_modules = kRecomputeMlp;
  CHECK(refused_key(p) == "recompute_modules");
  p = base;
  p.model.mtp_layers = 1;
  CHECK(refused_key(p) == "mtp_layers");
  p = base;
  p.job.knobs.moe_dispatcher = MoeDispatcher::HybridEp;
  CHECK(refused_key(p) == "moe_dispatcher");
  p = base;
  p.job.knobs.moe_a2a_overlap = true;
  CHECK(refused_key(p) == "moe_a2a_overlap");
  p = base;
  p.job.knobs.activation_offload_layers = 4;
  CHECK(refused_key(p) == "activation_offload_layers");
  p = base;
  p.job.knobs.tp_comm_overlap = true;
  CHECK(refused_key(p) == "tp_comm_overlap");
  p = base;
  p.job.knobs.param_gather_overlap = true;
  CHECK(refused_key(p) == "overlap_param_gather");
  p = base;
  p.job.knobs.fused_grouped_mlp = true;
  CHECK(refused_key(p) == "fused_grouped_mlp");
  p = base;
  p.job.ac_policy.kind = AcPolicyKind::TorchtitanOp;
  CHECK(refused_key(p) == "ac_policy");
  p = base;
  p.job.cp_comm = CpComm::AllGather;
  CHECK(refused_key(p) == "cp_comm");
  p = base;
  p.job.knobs.cross_entropy = CrossEntropyKernel::FlashXentropy;
  CHECK(refused_key(p) == "cross_entropy");
  p = base;
  p.job.knobs.train_metric_cross_entropies = 2;
  CHECK(refused_key(p) == "train_metric_cross_entropies");
}
