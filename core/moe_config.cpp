// Megatron-Core's EP/ETP layout rules (core/moe_config.h) with named reasons.
#include "core/moe_config.h"

#include "core/hsdp_config.h"

namespace meshplan {

static std::string str(int64_t v) { return std::to_string(v); }

int expert_data_parallel(const ParallelConfig& c) {
  const int64_t folded = static_cast<int64_t>(c.tp) * c.cp * c.dp;
  const int64_t group = static_cast<int64_t>(c.ep) * c.etp;
  if (group < 1 || folded % group != 0) return 0;
  return static_cast<int>(folded / group);
}

// Megatron-Core's asserts on --overlap-moe-expert-parallel-comm (core/moe_config.h).
static void check_a2a_overlap(const Problem& p, const ParallelConfig& c, const std::string& w, ErrorList& e) {
  if (!p.job.knobs.moe_a2a_overlap) return;
  const char* flag = "--moe-a2a-overlap";
  // Which framework runs it is the job's business (the CLI and plan-file reader refuse the others).
  if (!p.model.moe.enabled() || c.ep <= 1)
    e.push_back(make_error(w, flag, "true", "needs a mixture-of-experts model with --ep > 1 (ep=" + str(c.ep) + ")",
                           "raise --ep, or drop --moe-a2a-overlap"));
  else if (c.pp > 1 && c.virtual_stages <= 1)
    e.push_back(make_error(w, flag, "true", "with pp=" + str(c.pp) + " needs a virtual pipeline (virtual stages 1)",
                           "add --schedule interleaved --virtual-stages 2, or use --pp 1"));
  else if (c.recompute == Recompute::Full)
    e.push_back(make_error(w, flag, "true", "cannot run under full recomputation",
                           "use --recompute selective or none"));
}

ErrorList validate_moe_config(const Problem& p, const ParallelConfig& c, const std::string& w) {
  ErrorList e;
  const MoeSpec& moe = p.model.moe;
  if (c.ep < 1 || c.etp < 1) {
    e.push_back(make_error(w, c.ep < 1 ? "--ep" : "--etp", str(c.ep < 1 ? c.ep : c.etp), "must be >= 1", "e.g. --ep 8"));
    return e;
  }
  check_a2a_overlap(p, c, w, e);
  if (!moe.enabled()) {
    if (c.ep > 1 || c.etp > 1)
      e.push_back(make_error(w, c.ep > 1 ? "--ep" : "--etp", str(c.ep > 1 ? c.ep : c.etp),
                             "needs a mixture-of-experts model; " + p.model.name + " is dense",
                             "drop --ep/--etp (dense models run with ep=etp=1)"));
    return e;
  }
  if (moe.num_experts % c.ep != 0)
    e.push_back(make_error(w, "--ep", str(c.ep), "must divide num_experts=" + str(moe.num_experts),
                           "every EP rank holds num_experts/ep whole experts"));
  if (expert_data_parallel(c) == 0)
    e.push_back(make_error(w, "--ep", str(c.ep),
                           "ep*etp=" + str(static_cast<int64_t>(c.ep) * c.etp) + " must divide tp*cp*dp=" +
                               str(static_cast<int64_t>(c.tp) * c.cp * c.dp),
                           "the expert layers re-fold the tp*cp*dp ranks of a stage as etp*ep*edp"));
  const int gpn = p.hardware.gpus_per_node;
  if ((c.etp > gpn || gpn % c.etp != 0) && !p.job.allow_tp_across_nodes)
    e.push_back(make_error(w, "--etp", str(c.etp), "does not fit inside a node of " + str(gpn) + " GPUs",
                           "use an etp that divides the node, or pass --allow-tp-across-nodes"));
  if (c.tp > 1 && !c.sequence_parallel)
    e.push_back(make_error(w, "--sequence-parallel", "false", "Megatron-Core needs it for MoE models with tp > 1",
                           "add --sequence-parallel"));
  // ZeRO-3 shards the experts over the expert-data group (costmodel/expert_fsdp.h); hybrid sharding
  // of them (torchtitan's [dp_replicate, efsdp] expert mesh) is not costed.
  if (c.zero_stage >= 3 && hsdp_enabled(c))
    e.push_back(make_error(w, "--shard-group", str(c.shard_group),
                           "hybrid sharding (HSDP) of the routed experts under ZeRO-3 is not modelled",
                           "drop --shard-group (experts and dense weights fully sharded), or use --zero 2"));
  // The flex dispatcher folds TP x EP into one dispatch group (token_dispatcher.py
  // MoEFlexTokenDispatcher: num_experts * tp_size, router_topk * tp_size); meshplan costs it at etp 1.
  if (p.job.knobs.moe_dispatcher != MoeDispatcher::AllToAll && c.etp > 1)
    e.push_back(make_error(w, "--etp", str(c.etp),
                           std::string("is not costed with the ") + to_string(p.job.knobs.moe_dispatcher) +
                               " dispatcher (flex dispatch at etp 1 only)",
                           "use --etp 1, or --moe-dispatcher alltoall"));
  return e;
}

}  // namespace meshplan
