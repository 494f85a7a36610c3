// Predictions of published runs and their error statistics (`meshplan validate`).
#include "costmodel/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/attention_library.h"
#include "core/framework.h"
#include "core/job_features.h"
#include "core/te_attention_backend.h"
#include "core/units.h"
#include "costmodel/flops.h"
#include "costmodel/paper_flops.h"

namespace meshplan {

Problem run_problem(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw) {
  Problem p;
  const ModelSpec* m = set.find_model(run.model);
  assert(m != nullptr);  // parse_validation checked it
  p.model = *m;
  if (run.mtp_layers) p.model.mtp_layers = *run.mtp_layers;  // the run's MTP modules (costmodel/mtp.h)
  p.hardware = hw;
  select_attention_library(p.hardware, "cudnn", run.cudnn_version);  // the container's cuDNN (core/attention_library.h)
  p.job.gpus = run.gpus;
  p.job.global_batch = run.global_batch;
  p.job.seq_len = run.seq_len;
  p.job.dtype = set.dtype;
  p.job.convention = run.convention;  // the file's bytes_per_param unless the run names its own
  p.job.knobs = run_framework(run);
  // The container's TE / cuDNN may not run fused attention for these head dims here (core/te_attention_backend.h).
  apply_te_attention_path(p.job.knobs, p.model, p.hardware.compute_capability, run.te_version, run.cudnn_version);
  if (run.fp8) p.job.fp8 = run_fp8_recipe(run);
  if (auto c = parse_cp_comm(run.cp_comm)) p.job.cp_comm = *c;
  p.job.ac_policy = run.ac_policy;
  p.job.moe_imbalance = run.moe_imbalance;  // published expert load, where a source measured it (core/moe_load.h)
  p.job.moe_capacity_factor = run.moe_capacity_factor;
  // A published run is costed as it ran: a TP group wider than a node (nanotron's 80B on TP 16) pays its
  // inter-node collectives; keeping TP inside a node is the planner's rule, not a fact of the run.
  p.job.allow_tp_across_nodes = true;
  return p;
}

// The Transformer Engine / torchao recipe a run names: current scaling (TE Float8CurrentScaling,
// torchao "tensorwise" dynamic scaling), torchao "rowwise" (costmodel/fp8_rowwise.h), blockwise (TE
// Float8BlockScaling), else the frameworks' default delayed scaling (TE DelayedScaling; NeMo and
// llm-foundry default); torchtitan's float8 (torchao) without a recipe named is torchao's default
// dynamic tensorwise scaling (Float8LinearConfig's default CastConfig), costed as current scaling.
Fp8Recipe run_fp8_recipe(const ValidationRun& run) {
  if (auto r = parse_validation_fp8_recipe(run.fp8_recipe)) return *r;  // the loader refused other names
  if (run.fp8_recipe.empty() && run.framework == "torchtitan") return Fp8Recipe::Current;
  return Fp8Recipe::Delayed;
}

FrameworkKnobs run_framework(const ValidationRun& run) {
  // Start from what `--framework` sets (core/framework.cpp framework_knobs: DeepSpeed's buckets,
  // Transformer Engine's cuDNN attention for megatron/nemo, torchtitan eager); framework names the
  // CLI does not know (megatron-deepspeed, meta-4d) start from the plain defaults. The run's own
  // keys then override.
  const std::optional<Framework> f = parse_framework(run.framework);
  FrameworkKnobs k = f ? framework_knobs(framework_spec(*f)) : FrameworkKnobs{};
  k.attention = run.attention;
  // A run that names its kernel (llm-foundry's attn_impl, the flash-attn version) overrides the rule.
  if (auto named = parse_fused_kernel(run.fused_kernel)) k.fused_kernel = *named;
  k.tp_comm_overlap = run.tp_comm_overlap;
  k.param_gather_overlap = run.overlap_param_gather;
  k.moe_a2a_overlap = run.moe_a2a_overlap;
  if (auto d = parse_moe_dispatcher(run.moe_dispatcher)) k.moe_dispatcher = *d;  // "" = alltoall
  k.fused_grouped_mlp = run.fused_grouped_mlp;
  k.recompute_modules = run.recompute_modules;
  k.cuda_graphs = run.cuda_graphs;
  k.yarn_rope_fused = run.yarn_rope_fused;
  k.activation_offload_layers = run.activation_offload_layers;
  k.unpad_attention = run.unpad_attention;
  k.fms_model_code = run.fms_model_code;
  k.fp8_param_gather = run.fp8_param_gather;
  k.fp8_attention = run.fp8_attention;
  k.optimizer_states = run.optimizer_states;
  if (run.torch_compile) k.torch_compile = *run.torch_compile;  // torchtitan's `compile:` when given
  k.fused_rmsnorm = run.fused_rmsnorm;
  k.tp_async_allreduce = run.tp_async_allreduce;
  k.dp_all_reduce = run.dp_all_reduce;
  k.dp_reduce_bytes = run.dp_reduce_bytes;
  k.ddp_bucket_params = static_cast<double>(run.ddp_bucket_size);
  k.grad_accumulation_pass = run.grad_accumulation_pass;
  if (auto ce = parse_cross_entropy(run.cross_entropy)) k.cross_entropy = *ce;  // else the framework's
  k.train_metric_cross_entropies = run.train_metric_cross_entropies;
  if (run.forward_prefetch) k.sharding.forward_prefetch = *run.forward_prefetch;  // FSDP1's, when given
  if (auto b = parse_backward_prefetch(run.backward_prefetch)) k.sharding.backward_prefetch = *b;
  return k;
}

ParallelConfig run_config(const ValidationRun& run) {
  ParallelConfig c;
  c.tp = run.tp;
  c.pp = run.pp;
  c.dp = run.dp;
  c.cp = std::max(1, run.cp);
  c.zero_stage = run.zero_stage;
  // HSDP (costmodel/hsdp.h); a shard group as large as the DP group is plain FULL_SHARD (fms-fsdp's
  // "FSDP" rows).
  c.shard_group = run.shard_group == run.dp ? 0 : run.shard_group;
  c.micro_batch_size = run.micro_batch;
  c.num_micro_batches = run.dp > 0 && run.micro_batch > 0 ? run.global_batch / (run.dp * run.micro_batch) : 0;
  c.recompute = run.recompute;
  c.sequence_parallel = run.sequence_parallel;
  c.dp_overlap = run.dp_overlap;
  c.schedule = run.schedule;
  c.virtual_stages = run.virtual_stages;
  c.ep = run.ep;
  c.etp = run.etp;
  c.layers_per_stage = run.layers_per_stage;
  return c;
}

double published_iteration_s(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw) {
  if (run.iteration_s > 0) return run.iteration_s;
  const double B = static_cast<double>(run.global_batch), s = static_cast<double>(run.seq_len);
  const double gpus = static_cast<double>(run.gpus);
  if (run.tokens_per_s_per_gpu > 0) return B * s / (run.tokens_per_s_per_gpu * gpus);
  ModelSpec m = *set.find_model(run.model);
  if (run.mtp_layers) m.mtp_layers = *run.mtp_layers;  // the run's MTP modules count where the formula counts them
  const double flops = paper_flops(run.flops_formula, m, B, s);
  if (run.tflops_per_gpu > 0) return flops / (run.tflops_per_gpu * 1e12 * gpus);
  const double peak = run.mfu_peak_flops > 0   ? run.mfu_peak_flops
                      : set.mfu_peak_flops > 0 ? set.mfu_peak_flops
                                               : hw.peak_flops_for(set.dtype);
  return flops / (run.mfu * peak * gpus);
}

double RunPrediction::memory_error() const {
  return published_memory_bytes > 0 ? (estimate.memory.peak_bytes - published_memory_bytes) / published_memory_bytes
                                    : 0.0;
}

static std::string billions(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", b);
  return buf;
}

Result<bool> check_published_facts(const ValidationSet& set, const ValidationRun& run, const ModelSpec& m) {
  if (run.published_params <= 0 && run.published_params_billion <= 0) return true;
  const std::optional<int64_t> exact = m.exact_parameters();
  const std::string where = set.file + ": " + run.label;
  if (!exact)
    return make_error(where, "published_params", std::to_string(run.published_params), "model " + run.model +
                      " has no exact parameter count to check it against", "give the model its full shape");
  if (run.published_params > 0 && *exact != run.published_params)
    return make_error(where, "published_params", std::to_string(run.published_params),
                      "model " + run.model + " under models: has " + std::to_string(*exact) + " parameters",
                      "fix the model's keys (the run would be predicted for another model)");
  // The source prints billions to one decimal: the count must round to it (1e-9 B of slack for the
  // division).
  if (run.published_params_billion > 0 &&
      std::fabs(static_cast<double>(*exact) / 1e9 - run.published_params_billion) > 0.05 + 1e-9)
    return make_error(where, "published_params_billion", billions(run.published_params_billion),
                      "model " + run.model + " under models: has " + billions(static_cast<double>(*exact) / 1e9) +
                          " billion parameters",
                      "fix the model's keys (the run would be predicted for another model)");
  return true;
}

Result<RunPrediction> predict_run(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw) {
  const Problem p = run_problem(set, run, hw);
  if (auto facts = check_published_facts(set, run, p.model); !facts) return facts.error();
  const ParallelConfig c = run_config(run);
  if ((run.ep > 1 || run.etp > 1) && !p.model.moe.enabled()) {
    // The model's mixture-of-experts keys were not read into experts (a reader without them): the
    // run cannot be predicted as the MoE it is, so it is reported, not mispredicted as dense.
    RunPrediction skip;
    skip.set = set.name;
    skip.label = run.label;
    skip.tuning = run.tuning;
    skip.regression = run.regression;
    skip.skipped = "expert parallelism on a model read without experts (its MoE keys were not understood)";
    return skip;
  }
  const ErrorList errors = validate_config(p, c, set.file + ": " + run.label);
  if (!errors.empty()) return errors.front();
  RunPrediction out;
  out.set = set.name;
  out.label = run.label;
  out.derived = run.iteration_s <= 0;
  out.tuning = run.tuning;
  out.regression = run.regression;
  out.published_from = run.iteration_s > 0             ? "iteration_s"
                       : run.tokens_per_s_per_gpu > 0 ? "tokens_per_s_per_gpu"
                       : run.tflops_per_gpu > 0       ? "tflops_per_gpu"
                                                      : "mfu";
  out.published_s = published_iteration_s(set, run, hw);
  out.estimate = estimate_step(p, c);
  out.predicted_s = out.estimate.time.step_s;
  out.error = (out.predicted_s - out.published_s) / out.published_s;
  out.published_memory_bytes = run.published_memory_gib * kGiB;
  return out;
}

void summarize(ValidationReport& report) {
  const ErrorStats all = error_stats(report.runs, [](const RunPrediction&) { return true; });
  report.mean_abs_error = all.mean_abs_error;
  report.max_abs_error = all.max_abs_error;
  report.held_out = error_stats(report.runs, [](const RunPrediction& r) { return r.held_out(); });
  report.tuning = error_stats(report.runs, [](const RunPrediction& r) { return r.tuning; });
  report.regression = error_stats(report.runs, [](const RunPrediction& r) { return !r.regression.empty(); });
  report.skipped = 0;
  for (const auto& r : report.runs) report.skipped += r.skipped.empty() ? 0 : 1;
}

Result<ValidationReport> predict_set(const ValidationSet& set, const HardwareProfile& hw) {
  ValidationReport report;
  for (const ValidationRun& run : set.runs) {
    auto r = predict_run(set, run, hw);
    if (!r.ok()) return r.error();
    report.runs.push_back(r.value());
  }
  summarize(report);
  return report;
}

}  // namespace meshplan
