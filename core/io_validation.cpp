// Reads validation/*.yaml (published runs) into ValidationSet; model shapes go through parse_model.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "core/attention_library.h"
#include "core/io.h"
#include "core/io_detail.h"
#include "core/moe_load.h"
#include "core/job_features.h"
#include "core/validation_runs.h"
#include "core/optimizer_states.h"

namespace meshplan {

std::optional<Fp8Recipe> parse_validation_fp8_recipe(const std::string& name) {
  static const std::pair<const char*, Fp8Recipe> kNames[] = {
      {"delayed", Fp8Recipe::Delayed},     {"current-scaling", Fp8Recipe::Current}, {"tensorwise", Fp8Recipe::Current},
      {"rowwise", Fp8Recipe::Rowwise},     {"blockwise", Fp8Recipe::Blockwise},     {"mxfp8", Fp8Recipe::Mxfp8}};
  for (const auto& [n, r] : kNames)
    if (name == n) return r;
  return std::nullopt;
}

using io_detail::Reader;

namespace {

// FLOP formulas costmodel/paper_flops.cpp implements (validation/README.md "flops_formula values").
bool known_formula(const std::string& f) {
  return f.empty() || f == "megatron" || f == "megatron-core" || f == "megatron-core-moe" || f == "model" ||
         f == "mosaic" || f == "palm" || f == "torchtitan";
}
const char* const kFormulas = "megatron, megatron-core, megatron-core-moe, model, mosaic, palm or torchtitan";
const char* const kKernels = "flash2, flash1, triton, triton-ops or cudnn (core/framework_knobs.h)";
const char* const kLossKernels = "unfused|fused|torch_fp32|te_inplace|te|flash_xentropy|generic";

// File-level defaults of the per-run keys `attention`, `framework` and `use`.
struct RunDefaults {
  AttentionKind attention = AttentionKind::Fused;
  std::string framework;
  bool tuning = false;
  bool fp8 = false;
  bool unpad_attention = false;
  std::string model_code;
  bool fp8_param_gather = false;
  bool fp8_attention = false;
  std::string fused_kernel;
  std::string cross_entropy;
  int64_t train_metric_cross_entropies = 0;
  std::string cudnn_version;
  std::string te_version;
  std::string moe_routing;
  int64_t ddp_bucket_size = 0;
  bool tp_async_allreduce = true;
  std::optional<bool> forward_prefetch;
  std::string backward_prefetch;
  OptimizerStates optimizer_states;
};

// Megatron-Core's precision-aware optimizer (core/optimizer_states.h): `precision_aware_optimizer` and the
// three state dtypes over `base` (the file's, for a run); a dtype other than fp32 implies the optimizer.
OptimizerStates read_optimizer_states(Reader& r, const YAML::Node& n, const std::string& prefix,
                                      const OptimizerStates& base) {
  OptimizerStates s = base;
  s.precision_aware =
      r.boolean(n, "precision_aware_optimizer", prefix + "precision_aware_optimizer", base.precision_aware, "true|false");
  for (auto [key, state, out] : {std::tuple{"main_params_dtype", "main_params", &s.main_params},
                                 std::tuple{"exp_avg_dtype", "exp_avg", &s.exp_avg},
                                 std::tuple{"exp_avg_sq_dtype", "exp_avg_sq", &s.exp_avg_sq}}) {
    if (!Reader::has(n, key)) continue;
    const std::string text = r.text(n, key, prefix + key, std::string("fp32"), "fp32|fp16|bf16|fp8");
    const auto d = parse_state_dtype(text);
    if (!d) {
      r.fail(prefix + key, text, "unknown dtype", "fp32, fp16, bf16 or fp8");
      continue;
    }
    if (const std::string rule = state_dtype_rule(state, *d); !rule.empty())
      r.fail(prefix + key, text, "Megatron-Core does not store the main params in it", rule);
    *out = *d;
    if (*d != StateDtype::Fp32) s.precision_aware = true;
  }
  return s;
}

// Every key a run or a file may carry (validation/README.md). Anything else is refused: a misspelt
// key would otherwise leave its run costed as if the key were absent, and nothing would say so.
const std::set<std::string> kRunKeys = {
    "label", "model", "gpus", "tp", "pp", "dp", "cp", "ep", "etp", "zero", "global_batch", "micro_batch", "seq",
    "virtual_stages", "recompute", "sequence_parallel", "dp_overlap", "schedule", "iteration_s", "tflops_per_gpu",
    "tokens_per_s_per_gpu", "mfu", "mfu_peak_tflops", "shard_group", "flops_formula", "attention", "framework",
    "use", "regression", "fp8", "fp8_recipe", "fp8_param_gather", "ac_policy", "note", "assumed", "tp_comm_overlap",
    "overlap_param_gather", "moe_a2a_overlap", "activation_offload_layers", "dp_all_reduce", "dp_reduce_dtype",
    "grad_accumulation_pass", "cross_entropy", "unpad_attention", "compile", "norm_type", "fused_kernel",
    "bytes_per_param", "cp_comm", "published_params", "published_params_billion", "memory_gib", "async_tp",
    "tokens_per_batch_published", "forward_prefetch", "backward_prefetch", "fused_grouped_mlp", "yarn_rope_fused",
    "model_code", "layers_per_stage", "mtp_layers", "moe_dispatcher", "recompute_modules", "cuda_graphs",
    "cudnn_version", "fp8_attention", "train_metric_cross_entropies", "precision_aware_optimizer", "main_params_dtype",
    "exp_avg_dtype", "exp_avg_sq_dtype", "te_version", "moe_imbalance", "moe_capacity_factor", "moe_routing",
    "ddp_bucket_size", "tp_async_allreduce"};
const std::set<std::string> kFileKeys = {
    "source", "hardware", "dtype", "seq_len", "bytes_per_param", "flops_formula", "mfu_peak_tflops", "attention",
    "framework", "use", "fp8", "unpad_attention", "fp8_param_gather", "fused_kernel", "cross_entropy", "models",
    "runs", "forward_prefetch", "backward_prefetch", "model_code", "cudnn_version", "fp8_attention",
    "train_metric_cross_entropies", "precision_aware_optimizer", "main_params_dtype", "exp_avg_dtype",
    "exp_avg_sq_dtype", "te_version", "moe_routing", "ddp_bucket_size", "tp_async_allreduce"};

// Levenshtein distance of two short keys (insertions, deletions, substitutions).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

void reject_unknown_keys(Reader& r, const YAML::Node& map, const std::string& path, const std::set<std::string>& known) {
  if (!r.ok() || !map.IsMap()) return;
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (known.count(key)) continue;
    std::string nearest;
    size_t best = 4;  // suggest only a near miss (a typo), not any key
    for (const std::string& k : known)
      if (const size_t d = edit_distance(key, k); d < best) best = d, nearest = k;
    r.fail((path.empty() ? "" : path + ".") + key, io_detail::node_text(kv.second), "unknown key",
           (nearest.empty() ? std::string() : "did you mean " + nearest + "? ") +
               "validation/README.md lists every key");
    return;
  }
}

void read_run_moe_load(Reader& r, const YAML::Node& n, const std::string& path, const RunDefaults& defaults,
                       const ValidationSet& set, ValidationRun& run);

ValidationRun read_run(Reader& r, const YAML::Node& n, const std::string& path, const ValidationSet& set,
                       const RunDefaults& defaults) {
  ValidationRun run;
  run.model = r.text(n, "model", path + ".model", std::nullopt, "a key of `models:`");
  run.gpus = r.integer(n, "gpus", path + ".gpus", std::nullopt, "GPUs of the run");
  run.tp = static_cast<int>(r.integer(n, "tp", path + ".tp", int64_t{1}, "tensor-parallel size"));
  run.pp = static_cast<int>(r.integer(n, "pp", path + ".pp", int64_t{1}, "pipeline-parallel size"));
  run.dp = static_cast<int>(r.integer(n, "dp", path + ".dp", int64_t{1}, "data-parallel size"));
  run.zero_stage = static_cast<int>(r.integer(n, "zero", path + ".zero", int64_t{0}, "0..3"));
  run.global_batch = r.integer(n, "global_batch", path + ".global_batch", std::nullopt,
                               "sequences per iteration");
  run.micro_batch = r.integer(n, "micro_batch", path + ".micro_batch", int64_t{1}, "sequences per micro-batch");
  run.seq_len = r.integer(n, "seq", path + ".seq", set.seq_len, "tokens per sequence");
  run.virtual_stages = static_cast<int>(
      r.integer(n, "virtual_stages", path + ".virtual_stages", int64_t{1}, "interleaving factor v"));
  const std::string rc = r.text(n, "recompute", path + ".recompute", std::string("none"), "none|selective|full");
  if (auto v = parse_recompute(rc)) run.recompute = *v;
  else r.fail(path + ".recompute", rc, "unknown recompute mode", "none, selective or full");
  run.sequence_parallel = r.boolean(n, "sequence_parallel", path + ".sequence_parallel", false, "true|false");
  run.dp_overlap = r.boolean(n, "dp_overlap", path + ".dp_overlap", true, "true|false");
  const std::string sched = r.text(n, "schedule", path + ".schedule",
                                   std::string(run.virtual_stages > 1 ? "interleaved" : "1f1b"),
                                   "gpipe|1f1b|interleaved|zb-h1");
  if (auto s = parse_schedule(sched)) run.schedule = *s;
  else r.fail(path + ".schedule", sched, "unknown schedule", "gpipe, 1f1b, interleaved, zb-h1 or dualpipev");
  run.iteration_s = r.number(n, "iteration_s", path + ".iteration_s", 0.0, "published seconds per iteration");
  run.tflops_per_gpu = r.number(n, "tflops_per_gpu", path + ".tflops_per_gpu", 0.0, "published TFLOP/s per GPU");
  run.tokens_per_s_per_gpu =
      r.number(n, "tokens_per_s_per_gpu", path + ".tokens_per_s_per_gpu", 0.0, "published tokens/s per GPU");
  run.mfu = r.number(n, "mfu", path + ".mfu", 0.0, "published MFU as a fraction, e.g. 0.41");
  run.cp = static_cast<int>(r.integer(n, "cp", path + ".cp", int64_t{1}, "context-parallel size"));
  run.shard_group = static_cast<int>(r.integer(n, "shard_group", path + ".shard_group", int64_t{0}, "HSDP shard group size"));
  run.flops_formula = r.text(n, "flops_formula", path + ".flops_formula", set.flops_formula, "a FLOP formula");
  if (!known_formula(run.flops_formula))
    r.fail(path + ".flops_formula", run.flops_formula, "unknown FLOP counting", kFormulas);
  const std::string att = r.text(n, "attention", path + ".attention", std::string(to_string(defaults.attention)),
                                 "fused|materialized");
  if (auto k = parse_attention(att)) run.attention = *k;
  else r.fail(path + ".attention", att, "unknown attention kernel", "fused or materialized");
  run.framework = r.text(n, "framework", path + ".framework", defaults.framework, "megatron|deepspeed|fsdp|...");
  const std::string use = r.text(n, "use", path + ".use", std::string(defaults.tuning ? "tuning" : "held-out"),
                                 "tuning|held-out|regression");
  if (use != "tuning" && use != "held-out" && use != "regression")
    r.fail(path + ".use", use, "unknown use", "tuning, held-out or regression");
  run.tuning = use == "tuning";
  // A figure its publisher calls a regression measures a bug, not the layout: kept, predicted, printed
  // apart and not scored, and only with the publisher's own statement quoted.
  run.regression = r.text(n, "regression", path + ".regression", std::string(),
                          "where the publisher reports the regression");
  if (use == "regression" && run.regression.empty())
    r.fail(path + ".regression", "", "use: regression without the publisher's statement",
           "quote the footnote or issue that reports this figure as a regression");
  if (use != "regression" && !run.regression.empty())
    r.fail(path + ".use", use, "a `regression:` statement on a run that is not use: regression", "use: regression");
  run.fp8 = r.boolean(n, "fp8", path + ".fp8", defaults.fp8, "true|false");
  const std::string acp = r.text(n, "ac_policy", path + ".ac_policy", std::string(), "torchtitan-op|every-N-layers");
  if (auto a = parse_ac_policy(acp)) run.ac_policy = *a;
  else r.fail(path + ".ac_policy", acp, "unknown activation-checkpoint policy", "megatron, torchtitan-op or every-N-layers");
  run.note = r.text(n, "note", path + ".note", std::string(), "");
  run.tp_comm_overlap = r.boolean(n, "tp_comm_overlap", path + ".tp_comm_overlap", false, "true|false");
  run.overlap_param_gather =
      r.boolean(n, "overlap_param_gather", path + ".overlap_param_gather", false, "true|false");
  run.moe_a2a_overlap = r.boolean(n, "moe_a2a_overlap", path + ".moe_a2a_overlap", false, "true|false");
  run.fused_grouped_mlp = r.boolean(n, "fused_grouped_mlp", path + ".fused_grouped_mlp", false, "true|false");
  run.yarn_rope_fused = r.boolean(n, "yarn_rope_fused", path + ".yarn_rope_fused", false, "true|false");
  if ((run.fused_grouped_mlp || run.yarn_rope_fused) && run.framework != "megatron" && run.framework != "nemo")
    r.fail(path + (run.fused_grouped_mlp ? ".fused_grouped_mlp" : ".yarn_rope_fused"), run.framework,
           "is a Megatron-Core kernel choice",
           "framework: megatron or nemo, or drop the key");
  if (run.moe_a2a_overlap && run.framework != "megatron" && run.framework != "nemo")
    r.fail(path + ".moe_a2a_overlap", run.framework, "is Megatron-Core's overlapped expert all-to-all",
           "framework: megatron or nemo, or drop the key");
  run.activation_offload_layers = static_cast<int>(r.integer(
      n, "activation_offload_layers", path + ".activation_offload_layers", int64_t{0},
      "transformer layers whose activations go to host memory (Megatron-Core --cpu-offloading-num-layers)"));
  if (run.activation_offload_layers < 0 ||
      (run.activation_offload_layers > 0 && run.framework != "megatron" && run.framework != "nemo"))
    r.fail(path + ".activation_offload_layers", std::to_string(run.activation_offload_layers),
           run.activation_offload_layers < 0 ? "must not be negative"
                                             : "is Megatron-Core's CPU offloading; framework " + run.framework +
                                                   " does not run it",
           "framework: megatron or nemo, or drop the key");
  run.ddp_bucket_size = r.integer(n, "ddp_bucket_size", path + ".ddp_bucket_size", defaults.ddp_bucket_size,
                                  "parameters per Megatron-Core DDP bucket (DistributedDataParallelConfig.bucket_size)");
  if (run.ddp_bucket_size < 0 || (run.ddp_bucket_size > 0 && run.framework != "megatron" && run.framework != "nemo"))
    r.fail(path + ".ddp_bucket_size", std::to_string(run.ddp_bucket_size),
           run.ddp_bucket_size < 0 ? "must not be negative" : "is Megatron-Core's DDP bucket size; framework " + run.framework + " does not run it",
           "framework: megatron or nemo, or drop the key");
  run.tp_async_allreduce = r.boolean(n, "tp_async_allreduce", path + ".tp_async_allreduce",
                                     defaults.tp_async_allreduce, "true|false");
  run.dp_all_reduce = r.boolean(n, "dp_all_reduce", path + ".dp_all_reduce", false, "true|false");
  if (run.dp_all_reduce && run.zero_stage != 1)
    r.fail(path + ".dp_all_reduce", std::to_string(run.zero_stage), "is a ZeRO-1 reduction (zero: 1 only)",
           "zero: 1, or drop the key (ZeRO-0 all-reduces anyway)");
  const std::string reduce_dtype =
      r.text(n, "dp_reduce_dtype", path + ".dp_reduce_dtype", "", "bf16|fp16|fp32");
  if (reduce_dtype == "bf16" || reduce_dtype == "fp16") run.dp_reduce_bytes = 2;
  else if (reduce_dtype == "fp32") run.dp_reduce_bytes = 4;
  else if (!reduce_dtype.empty())
    r.fail(path + ".dp_reduce_dtype", reduce_dtype, "unknown gradient reduction dtype",
           "bf16, fp16 or fp32 (what the DP reduction sends per gradient element)");
  run.grad_accumulation_pass =
      r.boolean(n, "grad_accumulation_pass", path + ".grad_accumulation_pass", false, "true|false");
  run.cross_entropy =
      r.text(n, "cross_entropy", path + ".cross_entropy", defaults.cross_entropy, kLossKernels);
  // The container's cuDNN: its fused attention is costed with that release's curve (core/attention_library.h).
  run.cudnn_version = r.text(n, "cudnn_version", path + ".cudnn_version", defaults.cudnn_version, "e.g. 9.18.0");
  if (!run.cudnn_version.empty() && !valid_library_version(run.cudnn_version))
    r.fail(path + ".cudnn_version", run.cudnn_version, "not a release number", "dot-separated integers, e.g. 9.18.0");
  // The container's Transformer Engine: which attention path it takes (core/te_attention_backend.h).
  run.te_version = r.text(n, "te_version", path + ".te_version", defaults.te_version, "e.g. 2.2");
  if (!run.te_version.empty() && !valid_library_version(run.te_version))
    r.fail(path + ".te_version", run.te_version, "not a release number", "dot-separated integers, e.g. 2.2");
  if (!run.cross_entropy.empty() && !parse_cross_entropy(run.cross_entropy))
    r.fail(path + ".cross_entropy", run.cross_entropy, "unknown cross-entropy kernel",
           "unfused (Megatron-Core's default), fused (--cross-entropy-loss-fusion), torch_fp32, te_inplace (TE <= 2.17), te, "
           "flash_xentropy (flash-attn's, llm-foundry) or generic");
  const int64_t metric_passes =
      r.integer(n, "train_metric_cross_entropies", path + ".train_metric_cross_entropies",
                defaults.train_metric_cross_entropies, "cross entropies the trainer's metrics evaluate per micro-batch (Composer: 2)");
  if (metric_passes < 0 || metric_passes > 1000)
    r.fail(path + ".train_metric_cross_entropies", std::to_string(metric_passes), "must be a count from 0 to 1000",
           "0, or Composer's 2 (LanguageCrossEntropy and LanguagePerplexity)");
  else
    run.train_metric_cross_entropies = static_cast<int>(metric_passes);
  run.unpad_attention =
      r.boolean(n, "unpad_attention", path + ".unpad_attention", defaults.unpad_attention, "true|false");
  const std::string code = r.text(n, "model_code", path + ".model_code", defaults.model_code, "fms");
  if (!code.empty() && code != "fms")
    r.fail(path + ".model_code", code, "unknown model code",
           "fms (IBM's Foundation Model Stack, costmodel/fms_llama_ops.h)");
  if (!code.empty() && run.framework != "fsdp")
    r.fail(path + ".model_code", run.framework, "is costed for PyTorch FSDP runs only",
           "framework: fsdp, or drop the key");
  run.fms_model_code = code == "fms";
  run.forward_prefetch = defaults.forward_prefetch;
  if (Reader::has(n, "forward_prefetch"))
    run.forward_prefetch = r.boolean(n, "forward_prefetch", path + ".forward_prefetch", false, "true|false");
  run.backward_prefetch =
      r.text(n, "backward_prefetch", path + ".backward_prefetch", defaults.backward_prefetch, "pre|post|none");
  if (!run.backward_prefetch.empty() && !parse_backward_prefetch(run.backward_prefetch))
    r.fail(path + ".backward_prefetch", run.backward_prefetch, "unknown backward_prefetch",
           "pre (BACKWARD_PRE), post (BACKWARD_POST) or none");
  if ((run.forward_prefetch.has_value() || !run.backward_prefetch.empty()) && run.framework != "fsdp")
    r.fail(path + (run.forward_prefetch.has_value() ? ".forward_prefetch" : ".backward_prefetch"), run.framework,
           "is PyTorch FSDP's (FSDP1) setting", "framework: fsdp, or drop the key");
  run.optimizer_states = read_optimizer_states(r, n, path + ".", defaults.optimizer_states);
  if (run.optimizer_states.precision_aware && run.framework != "megatron" && run.framework != "nemo")
    r.fail(path + ".precision_aware_optimizer", run.framework.empty() ? "meshplan" : run.framework,
           "is Megatron-Core's precision-aware optimizer", "framework: megatron or nemo, or drop the optimizer-state keys");
  run.fp8_param_gather =
      r.boolean(n, "fp8_param_gather", path + ".fp8_param_gather", defaults.fp8_param_gather, "true|false");
  // Transformer Engine's FP8 attention needs one of its FP8 recipes (costmodel/fp8_attention.h).
  run.fp8_attention = r.boolean(n, "fp8_attention", path + ".fp8_attention", defaults.fp8_attention, "true|false");
  if (r.ok() && run.fp8_attention && !run.fp8)
    r.fail(path + ".fp8_attention", "true", "FP8 attention needs an FP8 run", "fp8: true with its fp8_recipe, or drop the key");
  if (Reader::has(n, "compile"))  // torchtitan's compile.enable; absent: the framework's default
    run.torch_compile = r.boolean(n, "compile", path + ".compile", true, "true|false");
  const std::string norm = r.text(n, "norm_type", path + ".norm_type", std::string("rmsnorm"), "rmsnorm|fused_rmsnorm");
  if (norm != "rmsnorm" && norm != "fused_rmsnorm")
    r.fail(path + ".norm_type", norm, "unknown norm_type", "rmsnorm or fused_rmsnorm (torchtitan's [model] norm_type)");
  run.fused_rmsnorm = norm == "fused_rmsnorm";
  if ((run.torch_compile.has_value() || run.fused_rmsnorm) && run.framework != "torchtitan")
    r.fail(path + (run.torch_compile.has_value() ? ".compile" : ".norm_type"), run.framework,
           "is costed for torchtitan's Llama code only", "framework: torchtitan, or drop the key");
  run.fused_kernel = r.text(n, "fused_kernel", path + ".fused_kernel", defaults.fused_kernel, kKernels);
  if (!run.fused_kernel.empty() && !parse_fused_kernel(run.fused_kernel))
    r.fail(path + ".fused_kernel", run.fused_kernel, "unknown attention kernel", kKernels);
  const std::string conv = r.text(n, "bytes_per_param", path + ".bytes_per_param",
                                  std::string(to_string(set.convention)), "default, megatron or fp32-grads");
  if (auto cv = parse_param_convention(conv)) run.convention = *cv;
  else r.fail(path + ".bytes_per_param", conv, "unknown convention", "default, megatron or fp32-grads");
  run.fp8_recipe = r.text(n, "fp8_recipe", path + ".fp8_recipe", std::string(), "current-scaling, tensorwise, rowwise, blockwise or mxfp8");
  if (!run.fp8_recipe.empty() && !parse_validation_fp8_recipe(run.fp8_recipe))
    r.fail(path + ".fp8_recipe", run.fp8_recipe, "unknown FP8 recipe",
           "delayed, current-scaling, tensorwise, rowwise, blockwise or mxfp8 (costmodel/validate.cpp run_fp8_recipe)");
  run.cp_comm = r.text(n, "cp_comm", path + ".cp_comm", std::string(), "p2p, all_gather, a2a or torch_all_gather");
  const std::optional<CpComm> cp_comm = parse_cp_comm(run.cp_comm);
  if (!run.cp_comm.empty() && !cp_comm)
    r.fail(path + ".cp_comm", run.cp_comm, "unknown CP exchange", "p2p, all_gather, a2a or torch_all_gather");
  if (cp_comm == CpComm::TorchAllGather && run.framework != "torchtitan")
    r.fail(path + ".cp_comm", run.cp_comm, "is PyTorch's context_parallel (torchtitan)",
           "framework: torchtitan, or p2p, all_gather or a2a");
  run.ep = static_cast<int>(r.integer(n, "ep", path + ".ep", int64_t{1}, "expert-parallel size"));
  run.etp = static_cast<int>(r.integer(n, "etp", path + ".etp", int64_t{1}, "expert tensor-parallel size"));
  run.mfu_peak_flops =
      1e12 * r.number(n, "mfu_peak_tflops", path + ".mfu_peak_tflops", 0.0, "peak of this run's MFU, TFLOP/s");
  run.published_params = r.integer(n, "published_params", path + ".published_params", int64_t{0},
                                   "the exact parameter count the source prints");
  run.published_params_billion = r.number(n, "published_params_billion", path + ".published_params_billion", 0.0,
                                          "the source's parameter count in billions (0.1 B precision)");
  run.published_memory_gib =
      r.number(n, "memory_gib", path + ".memory_gib", 0.0, "published peak memory per GPU, GiB");
  run.async_tp = r.boolean(n, "async_tp", path + ".async_tp", false, "true|false");
  io_detail::read_run_recompute(r, n, path, run);  // recompute_modules (core/io_validation_megatron_lists.cpp)
  io_detail::read_run_graphs(r, n, path, run);     // cuda_graphs (the same file)
  io_detail::read_run_layout(r, n, path, run);  // layers_per_stage, mtp_layers (core/io_validation_layout.cpp)
  r.text(n, "tokens_per_batch_published", path + ".tokens_per_batch_published", std::string(),
         "the source's batch size in tokens, as printed (documentation)");
  reject_unknown_keys(r, n, path, kRunKeys);
  run.label = r.text(n, "label", path + ".label",
                     run.model + " " + to_string(run.recompute) + (run.sequence_parallel ? "+sp" : ""), "");
  if (r.ok() && run.iteration_s <= 0 && run.tokens_per_s_per_gpu <= 0 && run.tflops_per_gpu <= 0 && run.mfu <= 0)
    r.fail(path + ".iteration_s", "", "needs iteration_s, tokens_per_s_per_gpu, tflops_per_gpu or mfu",
           "the published measurement");
  if (r.ok() && run.iteration_s <= 0 && run.tokens_per_s_per_gpu <= 0 && run.flops_formula.empty())
    r.fail(path + ".tflops_per_gpu", std::to_string(run.tflops_per_gpu),
           "needs the file's flops_formula to turn TFLOP/s into time", "flops_formula: megatron or model");
  if (r.ok() && !set.find_model(run.model))
    r.fail(path + ".model", run.model, "not one of the file's models", "add it under `models:`");
  read_run_moe_load(r, n, path, defaults, set, run);
  return run;
}

// The routed-expert load and how the source routed (core/moe_load.h): ranges checked against the run's model.
void read_run_moe_load(Reader& r, const YAML::Node& n, const std::string& path, const RunDefaults& defaults,
                       const ValidationSet& set, ValidationRun& run) {
  run.moe_imbalance = r.number(n, "moe_imbalance", path + ".moe_imbalance", 1.0, "busiest expert's tokens / mean, e.g. 1.3");
  run.moe_capacity_factor =
      r.number(n, "moe_capacity_factor", path + ".moe_capacity_factor", 0.0, "0 = dropless, e.g. 1.0");
  run.moe_routing = r.text(n, "moe_routing", path + ".moe_routing", defaults.moe_routing, "natural, forced or capacity");
  if (r.ok() && !run.moe_routing.empty() && run.moe_routing != "natural" && run.moe_routing != "forced" &&
      run.moe_routing != "capacity")
    r.fail(path + ".moe_routing", run.moe_routing, "unknown routing",
           "natural (unforced top-k), forced (--moe-router-force-load-balancing) or capacity (token drop, padded)");
  const ModelSpec* m = set.find_model(run.model);
  if (!r.ok() || !m) return;
  Job job;
  job.moe_imbalance = run.moe_imbalance;
  job.moe_capacity_factor = run.moe_capacity_factor;
  for (const Error& e : validate_moe_load(*m, job, set.file)) {
    r.fail(path + "." + e.field, e.value, e.message, e.hint);
    return;
  }
  if (!m->moe.enabled() && !run.moe_routing.empty())
    r.fail(path + ".moe_routing", run.moe_routing, "is the routing of a mixture-of-experts model; " + m->name + " is dense",
           "drop it");
}

}  // namespace

static Result<ValidationSet> parse_validation_unguarded(const std::string& text, const std::string& file) {
  auto doc = io_detail::parse_yaml(text, file);
  if (!doc.ok()) return doc.error();
  const YAML::Node& root = doc.value();
  Reader r(file);
  ValidationSet set;
  set.file = file;
  set.name = io_detail::file_stem(file);
  set.source = r.text(root, "source", "source", std::string(), "citation of the paper");
  set.hardware = r.text(root, "hardware", "hardware", std::nullopt, "a shipped profile, e.g. a100-80gb-sxm");
  set.dtype = r.text(root, "dtype", "dtype", std::string("bf16"), "bf16 or fp16");
  set.seq_len = r.integer(root, "seq_len", "seq_len", int64_t{2048}, "tokens per sequence");
  const std::string conv = r.text(root, "bytes_per_param", "bytes_per_param", std::string("default"),
                                  "default (16), megatron (18) or fp32-grads (20)");
  if (auto cv = parse_param_convention(conv)) set.convention = *cv;
  else r.fail("bytes_per_param", conv, "unknown convention", "default, megatron or fp32-grads");
  set.flops_formula = r.text(root, "flops_formula", "flops_formula", std::string(), "megatron or model");
  if (!known_formula(set.flops_formula)) r.fail("flops_formula", set.flops_formula, "unknown FLOP counting", kFormulas);

  set.mfu_peak_flops = 1e12 * r.number(root, "mfu_peak_tflops", "mfu_peak_tflops", 0.0, "peak of the source's MFU");
  RunDefaults defaults;
  const std::string att = r.text(root, "attention", "attention", std::string("fused"), "fused|materialized");
  if (auto k = parse_attention(att)) defaults.attention = *k;
  else r.fail("attention", att, "unknown attention kernel", "fused or materialized");
  defaults.framework = r.text(root, "framework", "framework", std::string(), "megatron|deepspeed|fsdp|...");
  const std::string use = r.text(root, "use", "use", std::string("held-out"), "tuning|held-out");
  if (use != "tuning" && use != "held-out") r.fail("use", use, "unknown use", "tuning or held-out");
  defaults.tuning = use == "tuning";
  defaults.fp8 = r.boolean(root, "fp8", "fp8", set.dtype == "fp8", "true|false");
  defaults.unpad_attention = r.boolean(root, "unpad_attention", "unpad_attention", false, "true|false");
  defaults.model_code = r.text(root, "model_code", "model_code", std::string(), "fms");
  if (Reader::has(root, "forward_prefetch"))
    defaults.forward_prefetch = r.boolean(root, "forward_prefetch", "forward_prefetch", false, "true|false");
  defaults.backward_prefetch = r.text(root, "backward_prefetch", "backward_prefetch", std::string(), "pre|post|none");
  if (!defaults.backward_prefetch.empty() && !parse_backward_prefetch(defaults.backward_prefetch))
    r.fail("backward_prefetch", defaults.backward_prefetch, "unknown backward_prefetch",
           "pre (BACKWARD_PRE), post (BACKWARD_POST) or none");
  defaults.optimizer_states = read_optimizer_states(r, root, "", OptimizerStates{});
  defaults.fp8_param_gather = r.boolean(root, "fp8_param_gather", "fp8_param_gather", false, "true|false");
  defaults.ddp_bucket_size = r.integer(root, "ddp_bucket_size", "ddp_bucket_size", int64_t{0},
                                       "parameters per Megatron-Core DDP bucket (DistributedDataParallelConfig.bucket_size)");
  defaults.tp_async_allreduce = r.boolean(root, "tp_async_allreduce", "tp_async_allreduce", true, "true|false");
  defaults.fp8_attention = r.boolean(root, "fp8_attention", "fp8_attention", false, "true|false");
  defaults.fused_kernel = r.text(root, "fused_kernel", "fused_kernel", std::string(), kKernels);
  if (!defaults.fused_kernel.empty() && !parse_fused_kernel(defaults.fused_kernel))
    r.fail("fused_kernel", defaults.fused_kernel, "unknown attention kernel", kKernels);
  defaults.cross_entropy =
      r.text(root, "cross_entropy", "cross_entropy", std::string(), kLossKernels);
  defaults.cudnn_version = r.text(root, "cudnn_version", "cudnn_version", std::string(), "e.g. 9.18.0");
  if (r.ok() && !defaults.cudnn_version.empty() && !valid_library_version(defaults.cudnn_version))
    r.fail("cudnn_version", defaults.cudnn_version, "not a release number", "dot-separated integers, e.g. 9.18.0");
  defaults.te_version = r.text(root, "te_version", "te_version", std::string(), "e.g. 2.2");
  defaults.moe_routing = r.text(root, "moe_routing", "moe_routing", std::string(), "natural, forced or capacity");
  if (r.ok() && !defaults.te_version.empty() && !valid_library_version(defaults.te_version))
    r.fail("te_version", defaults.te_version, "not a release number", "dot-separated integers, e.g. 2.2");
  if (!defaults.cross_entropy.empty() && !parse_cross_entropy(defaults.cross_entropy))
    r.fail("cross_entropy", defaults.cross_entropy, "unknown cross-entropy kernel",
           "unfused, fused, torch_fp32, te_inplace, te, flash_xentropy or generic");
  defaults.train_metric_cross_entropies =
      r.integer(root, "train_metric_cross_entropies", "train_metric_cross_entropies", int64_t{0},
                "cross entropies the trainer's metrics evaluate per micro-batch (Composer: 2)");
  reject_unknown_keys(r, root, "", kFileKeys);
  const YAML::Node models = r.map(root, "models", "models", false, "model shapes keyed by name");
  if (!r.ok()) return *r.error;
  for (const auto& kv : models) {
    const std::string key = kv.first.as<std::string>();
    YAML::Emitter out;
    out << kv.second;
    auto m = parse_model(out.c_str(), file + ": models." + key);
    if (!m.ok()) return m.error();
    ModelSpec spec = m.value();
    spec.name = key;
    set.models.emplace_back(key, spec);
  }
  const YAML::Node runs = root["runs"];
  if (!runs || !runs.IsSequence() || runs.size() == 0)
    return make_error(file, "runs", "", "missing or empty list", "list the published runs under `runs:`");
  for (size_t i = 0; i < runs.size(); ++i) {
    ValidationRun run = read_run(r, runs[i], "runs[" + std::to_string(i) + "]", set, defaults);
    if (!r.ok()) return *r.error;
    set.runs.push_back(run);
  }
  return set;
}

Result<ValidationSet> parse_validation(const std::string& text, const std::string& file) {
  return io_detail::guarded<ValidationSet>(file, [&] { return parse_validation_unguarded(text, file); });
}

Result<ValidationSet> load_validation(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.ok()) return text.error();
  return parse_validation(text.value(), path);
}

}  // namespace meshplan
