// Shared CLI flags -> Problem and ParallelConfig, with every bad value turned into one Error.
#include "cli/options.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/help_text.h"
#include "cli/plan_file.h"
#include "core/attention_library.h"
#include "core/te_attention_backend.h"
#include "core/framework.h"
#include "core/io.h"
#include "core/limits.h"
#include "core/moe_load.h"
#include "core/mtp_config.h"
#include "core/recompute_modules.h"
#include "core/offload_config.h"
#include "planner/pipeline_balance.h"

namespace meshplan::cli {

namespace fs = std::filesystem;
static const char* kCmd = "command line";

void add_problem_options(CLI::App* sub, ProblemOptions& o) {
  o.app = sub;
  const std::string unless = "--plan";
  required_flag(sub->add_option("--model", o.model, "Model file (YAML/JSON, Hugging Face config.json keys)"), unless);
  required_flag(sub->add_option("--hardware", o.hardware,
                                "Hardware profile: shipped name (e.g. a100-80gb-sxm, h100-80gb-sxm) or a YAML path"),
                unless);
  required_flag(sub->add_option("--gpus", o.gpus, "Number of GPUs"), unless);
  required_flag(sub->add_option("--global-batch", o.global_batch, "Sequences (not tokens) per optimizer step"), unless);
  sub->add_option("--seq", o.seq, "Sequence length in tokens (default: the model's max_position_embeddings, else 2048)");
  allowed_values(sub->add_option("--dtype", o.dtype, "Compute dtype whose peak FLOP/s the profile lists (default bf16)"),
                 {"bf16", "fp16", "tf32", "fp32", "fp8"});
  allowed_values(sub->add_option("--bytes-per-param", o.bytes_per_param,
                                 "Weights+grads+optimizer bytes per parameter: default (16), megatron (18), fp32-grads "
                                 "(20) (default: default)"),
                 {"default", "megatron", "fp32-grads"});
  allowed_values(sub->add_option("--framework", o.framework,
                                 "Framework the plan is for (meshplan: what `meshplan run` executes). Admits only "
                                 "what that framework runs and costs it with its conventions (megatron: fp32 main "
                                 "grads, 18 B/param)"),
                 {"megatron", "deepspeed", "fsdp", "torchtitan", "nemo", "meshplan"});
  sub->add_flag("--allow-tp-across-nodes", o.allow_tp_across_nodes, "Allow TP groups larger than a node");
  allowed_values(sub->add_option("--attention", o.attention,
                                 "Attention kernel: fused (FlashAttention 2/3, cuDNN SDPA, Transformer Engine: no "
                                 "s x s scores stored, recomputed in backward) or materialized (Megatron-LM 2021-22 "
                                 "softmax, s x s scores stashed, Korthikanti et al. 2022) (default fused)"),
                 {"fused", "materialized"});
  sub->add_option("--profiles-dir", o.profiles_dir, "Directory of hardware profiles (default: shipped)");
  sub->add_option("--mtp-layers", o.mtp_layers,
                  "Multi-token-prediction modules trained with the model (DeepSeek-V3 sec. 2.2; Megatron-Core "
                  "--mtp-num-layers): each one more transformer layer, a 2h x h projection and a second pass of "
                  "the LM head and loss, on the last pipeline stage; needs --framework megatron or nemo "
                  "(default: the model file's mtp_layers, else 0; num_nextn_predict_layers is not read as it)");
  add_feature_options(sub, o.features);
}

void add_config_options(CLI::App* sub, ConfigOptions& o) {
  o.app = sub;
  sub->add_option("--tp", o.tp, "Tensor-parallel degree (default 1)");
  sub->add_option("--pp", o.pp, "Pipeline-parallel degree (default 1)");
  sub->add_option("--ep", o.ep, "Expert-parallel degree: MoE experts split over ep of the DP ranks (default 1)");
  sub->add_option("--zero", o.zero, "ZeRO stage 0..3 (default 0)");
  sub->add_option("--shard-group", o.shard_group,
                  "Hybrid sharding (HSDP): ZeRO state sharded within groups of N data-parallel ranks and "
                  "replicated across dp/N groups, whose gradient shards are all-reduced (PyTorch FSDP "
                  "HYBRID_SHARD, torchtitan data_parallel_shard_degree: --zero 2|3 under --framework fsdp or "
                  "torchtitan; Megatron's --num-distributed-optimizer-instances dp/N: --zero 1 under --framework "
                  "megatron) (default 0: shard over all DP ranks)");
  sub->add_option("--micro-batch", o.micro_batch, "Sequences per micro-batch (default 1)");
  allowed_values(sub->add_option("--recompute", o.recompute, "Activation recomputation (default none)"),
                 {"none", "selective", "full"});
  sub->add_flag("--sequence-parallel", o.sequence_parallel, "Megatron sequence parallelism (tp > 1)");
  allowed_values(sub->add_option("--schedule", o.schedule,
                                 "Pipeline schedule: gpipe, 1f1b, interleaved (Megatron's interleaved 1F1B), zb-h1 "
                                 "(zero bubble H1), dualpipev (DeepSeek's DualPipe cut in half, as PyTorch's "
                                 "ScheduleDualPipeV runs it: two chunks per rank in a V, so rank 0 holds the "
                                 "embedding and the LM head; needs >= 2 pp micro-batches) (default 1f1b)"),
                 {"gpipe", "1f1b", "interleaved", "zb-h1", "dualpipev"});
  sub->add_option("--virtual-stages", o.virtual_stages,
                  "Model chunks per pipeline rank (interleaved; dualpipev: always 2, set when left out)");
  sub->add_flag("--no-dp-overlap", o.no_dp_overlap, "Do not overlap DP gradient reduction with backward");
  sub->add_option("--layers-per-stage", o.layers_per_stage, "Layers per pipeline chunk in model order, e.g. 7,9,9,7; the first and last may be 0 (a chunk with only the embedding, or only the LM head and loss: Megatron-Bridge's account_for_embedding/loss_in_pipeline_split)");
  allowed_values(
      sub->add_option("--pipeline-split", o.pipeline_split,
                      "A named layer split over the pipeline chunks instead of --layers-per-stage: even (as even "
                      "as possible, the default), balanced (the chunk with the LM head and MTP modules gets fewer "
                      "layers so the ranks' FLOPs even out), embedding-loss (Megatron-Core's "
                      "account_for_embedding/loss_in_pipeline_split as Megatron-Bridge's large-model recipes set "
                      "them, and Llama 3's \"reduce one Transformer layer each from the first and the last "
                      "stages\": the embedding and the loss count as one layer each, e.g. Llama 3.1 405B over "
                      "PP 16 x V 8 = 0, 1 x 126, 0)"),
      {"even", "balanced", "embedding-loss"});
  add_cp_option(sub, o.cp);
  sub->add_option("--etp", o.etp, "Expert tensor-parallel degree, MoE models (default: --tp, as Megatron-Core)");
}

void add_output_options(CLI::App* sub, OutputOptions& o) {
  allowed_values(sub->add_option("--format", o.format, "Output format (default table)"), {"table", "json", "yaml"});
  sub->add_option("--output", o.output, "Write the result file here");
}

void add_plan_input_options(CLI::App* sub, PlanInputOptions& o) {
  sub->add_option("--plan", o.plan, "Take problem and configuration from a plan file");
  sub->add_option("--candidate", o.candidate, "Which candidate of the plan file (default 0 = best)");
}

static bool given(CLI::App* app, const char* flag) { return app && app->count(flag) > 0; }

std::string default_profiles_dir() {
  if (const char* env = std::getenv("MESHPLAN_PROFILES"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "meshplan" / "hardware-profiles";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles";
}

static Error required(const char* flag, const char* hint) {
  return make_error(kCmd, flag, "", "is required", hint);
}

static Result<bool> check_required(const ProblemOptions& o) {
  if (o.model.empty()) return required("--model", "e.g. --model examples/models/llama-2-7b.yaml");
  if (o.hardware.empty()) return required("--hardware", "e.g. --hardware a100-80gb-sxm");
  if (o.app && !given(o.app, "--gpus")) return required("--gpus", "e.g. --gpus 8");
  if (o.app && !given(o.app, "--global-batch"))
    return required("--global-batch", "sequences per optimizer step, e.g. --global-batch 64");
  return true;
}

static Result<ModelSpec> load_model_flag(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return make_error(kCmd, "--model", path, "no such file",
                      "pass a model file, e.g. examples/models/llama-2-7b.yaml");
  return load_model(path);
}

static std::string dtypes_of(const HardwareProfile& hw) {
  std::string s;
  for (const auto& kv : hw.peak_flops) s += (s.empty() ? "" : ", ") + kv.first;
  return s;
}

static Result<Job> make_job(const ProblemOptions& o, const Problem& p) {
  Job job;
  job.gpus = o.gpus;
  job.global_batch = o.global_batch;
  job.seq_len = o.seq != 0 ? o.seq
                : p.model.max_position_embeddings > 0 ? p.model.max_position_embeddings : 2048;
  job.dtype = o.dtype;
  job.allow_tp_across_nodes = o.allow_tp_across_nodes;
  auto fw = parse_framework(o.framework);
  if (!fw) return make_error(kCmd, "--framework", o.framework, "unknown framework", "use " + framework_names());
  job.framework = *fw;
  auto conv = parse_param_convention(o.bytes_per_param);
  if (!conv)
    return make_error(kCmd, "--bytes-per-param", o.bytes_per_param, "unknown convention",
                      "use default (16), megatron (18) or fp32-grads (20)");
  // The framework fixes the convention; --bytes-per-param may only restate it (or choose one for
  // meshplan's own executor).
  const ParamConvention implied = framework_spec(*fw).convention;
  if (*fw != Framework::Meshplan && given(o.app, "--bytes-per-param") && *conv != implied)
    return make_error(kCmd, "--bytes-per-param", o.bytes_per_param,
                      "conflicts with --framework " + o.framework + ", which keeps " + to_string(implied),
                      "drop --bytes-per-param: the framework's convention applies");
  job.convention = *fw == Framework::Meshplan ? *conv : implied;
  job.knobs = framework_knobs(framework_spec(*fw));
  if (!o.app || given(o.app, "--attention")) {
    auto attention = parse_attention(o.attention);
    if (!attention)
      return make_error(kCmd, "--attention", o.attention, "unknown attention kernel", "use fused or materialized");
    job.knobs.attention = *attention;
  }
  if (auto r = apply_feature_options(o.features, job); !r) return r.error();
  if (ErrorList e = validate_offload_job(p.model, p.hardware, job.knobs.activation_offload_layers, kCmd); !e.empty())
    return e.front();  // core/offload_config.h
  if (ErrorList e = validate_mtp_job(p.model, job, kCmd); !e.empty()) return e.front();  // core/mtp_config.h
  if (job.knobs.moe_a2a_overlap && !p.model.moe.enabled())
    return make_error(kCmd, "--moe-a2a-overlap", "true",
                      "hides the expert all-to-all of a mixture-of-experts model; " + p.model.name + " is dense",
                      "drop --moe-a2a-overlap");
  // The routed-expert load against the model (core/moe_load.h), named by its flag.
  if (ErrorList e = validate_moe_load(p.model, job, kCmd); !e.empty()) {
    e.front().field = e.front().field == "moe_imbalance" ? "--moe-imbalance" : "--moe-capacity-factor";
    return e.front();
  }
  if (job.knobs.moe_dispatcher != MoeDispatcher::AllToAll && !p.model.moe.enabled())
    return make_error(kCmd, "--moe-dispatcher", to_string(job.knobs.moe_dispatcher),
                      "dispatches the tokens of a mixture-of-experts model; " + p.model.name + " is dense",
                      "drop --moe-dispatcher");
  if (p.hardware.peak_flops_for(o.dtype) <= 0.0)
    return make_error(kCmd, "--dtype", o.dtype, "not listed in profile " + p.hardware.name,
                      "available: " + dtypes_of(p.hardware));
  ErrorList e = validate_job(job, kCmd);
  if (!e.empty()) return e.front();
  return job;
}

Result<Problem> load_problem(const ProblemOptions& o) {
  if (auto r = check_required(o); !r) return r.error();
  Problem p;
  auto model = load_model_flag(o.model);
  if (!model) return model.error();
  p.model = std::move(model).value();
  if (given(o.app, "--mtp-layers")) {
    if (o.mtp_layers < 0 || o.mtp_layers > limits::kMaxMtpLayers)
      return make_error(kCmd, "--mtp-layers", std::to_string(o.mtp_layers),
                        "must be in " + limits::range_text(0, limits::kMaxMtpLayers), "DeepSeek-V3 trains 1");
    p.model.mtp_layers = o.mtp_layers;
  }
  auto hw = load_hardware(o.hardware, o.profiles_dir.empty() ? default_profiles_dir() : o.profiles_dir);
  if (!hw) return hw.error();
  p.hardware = std::move(hw).value();
  ErrorList he = validate_hardware(p.hardware);
  if (!he.empty()) return he.front();
  auto job = make_job(o, p);
  if (!job) return job.error();
  p.job = job.value();
  // The cuDNN release's attention curve (core/attention_library.h); a plan file embeds the chosen one.
  select_attention_library(p.hardware, "cudnn", o.features.cudnn_version);
  // Whether the releases' TE takes fused attention for these head dims here (core/te_attention_backend.h).
  apply_te_attention_path(p.job.knobs, p.model, p.hardware.compute_capability, o.features.te_version,
                          o.features.cudnn_version);
  return p;
}

static Result<std::vector<int>> parse_layers(const std::string& s, const std::string& where) {
  std::vector<int> out;
  if (s.empty()) return out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    // 0 is refused later except first and last (core/parallel_config.h layer_split_ok).
    if (item.empty() || *end != '\0' || v < 0 || v > limits::kMaxLayers)
      return make_error(where, "--layers-per-stage", s,
                        "must be integers in 0.." + std::to_string(limits::kMaxLayers) + " separated by commas",
                        "e.g. --layers-per-stage 7,9,9,7 (0 only first or last: embedding or LM head alone)");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// --pipeline-split: the planner's named splits (planner/pipeline_balance.h) as layers_per_stage; empty = even.
static Result<bool> named_split(const Problem& p, const ConfigOptions& o, ParallelConfig& c, const std::string& w) {
  if (!o.pipeline_split.empty() && o.pipeline_split != "even" && o.pipeline_split != "balanced" &&
      o.pipeline_split != "embedding-loss")
    return make_error(w, "--pipeline-split", o.pipeline_split, "unknown split", "use even, balanced or embedding-loss");
  if (!o.pipeline_split.empty() && !c.layers_per_stage.empty())
    return make_error(w, "--pipeline-split", o.pipeline_split, "and --layers-per-stage both give the split",
                      "drop one of them");
  if (o.pipeline_split.empty() || o.pipeline_split == "even") return true;
  const int v = std::max(1, c.virtual_stages);
  if (o.pipeline_split == "balanced") {
    c.layers_per_stage = balanced_layers_per_chunk(p, c.pp, v);  // empty: the even split is already balanced
    return true;
  }
  const int64_t chunks = static_cast<int64_t>(c.pp) * v, slots = p.model.num_layers + 2;
  if (c.pp < 2 || slots % chunks != 0)
    return make_error(w, "--pipeline-split", o.pipeline_split,
                      "needs pp >= 2 and num_hidden_layers + 2 (" + std::to_string(slots) +
                          ": the embedding and the loss count as one layer each) divisible by pp*v (" +
                          std::to_string(chunks) + ")",
                      "change --pp or --virtual-stages, or give --layers-per-stage");
  c.layers_per_stage = embedding_loss_layers_per_chunk(p.model, c.pp, v);  // empty: equals the even split
  return true;
}

static Result<bool> parse_enums(const ConfigOptions& o, ParallelConfig& c, const std::string& w) {
  auto rc = parse_recompute(o.recompute);
  if (!rc) return make_error(w, "--recompute", o.recompute, "unknown mode", "use none, selective or full");
  auto sk = parse_schedule(o.schedule);
  if (!sk)
    return make_error(w, "--schedule", o.schedule, "unknown schedule", "use gpipe, 1f1b, interleaved, zb-h1 or dualpipev");
  c.recompute = *rc;
  c.schedule = *sk;
  return true;
}

Result<ParallelConfig> make_config(const Problem& p, const ConfigOptions& o, const std::string& where) {
  ParallelConfig c;
  c.tp = o.tp;
  c.pp = o.pp;
  if (c.tp < 1) return make_error(where, "--tp", std::to_string(o.tp), "must be >= 1", "e.g. --tp 8");
  if (c.pp < 1) return make_error(where, "--pp", std::to_string(o.pp), "must be >= 1", "e.g. --pp 4");
  if (o.micro_batch < 1 || o.micro_batch > p.job.global_batch)
    return make_error(where, "--micro-batch", std::to_string(o.micro_batch),
                      "must be in 1.." + std::to_string(p.job.global_batch) + " (the global batch)", "e.g. 1");
  if (c.tp > limits::kMaxDegree || c.pp > limits::kMaxDegree || o.virtual_stages > limits::kMaxDegree)
    return make_error(where, c.tp > limits::kMaxDegree ? "--tp" : c.pp > limits::kMaxDegree ? "--pp" : "--virtual-stages",
                      std::to_string(std::max({c.tp, c.pp, o.virtual_stages})),
                      "must be in 1.." + std::to_string(limits::kMaxDegree), "e.g. --tp 8");
  if (o.ep < 1 || o.ep > limits::kMaxDegree || o.cp < 1 || o.cp > limits::kMaxDegree)
    return make_error(where, o.ep < 1 || o.ep > limits::kMaxDegree ? "--ep" : "--cp",
                      std::to_string(o.ep < 1 || o.ep > limits::kMaxDegree ? o.ep : o.cp),
                      "must be in 1.." + std::to_string(limits::kMaxDegree), "e.g. --cp 2");
  c.ep = o.ep;
  c.cp = o.cp;
  const int64_t mp = static_cast<int64_t>(c.tp) * c.pp * c.cp;  // DP = gpus / (tp * cp * pp)
  c.dp = static_cast<int>(std::max<int64_t>(1, p.job.gpus / mp));
  c.zero_stage = o.zero;
  c.shard_group = o.shard_group == c.dp ? 0 : o.shard_group;  // the whole DP group: plain sharding
  c.micro_batch_size = o.micro_batch;
  c.num_micro_batches = std::max<int64_t>(1, p.job.global_batch / (c.dp * o.micro_batch));
  c.sequence_parallel = o.sequence_parallel;
  c.virtual_stages = o.virtual_stages;
  c.dp_overlap = !o.no_dp_overlap;
  // Megatron-Core: --expert-tensor-parallel-size defaults to --tensor-model-parallel-size.
  c.etp = o.etp > 0 ? o.etp : (p.model.moe.enabled() ? c.tp : 1);
  if (auto r = parse_enums(o, c, where); !r) return r.error();
  // DualPipeV holds two chunks per rank: that is --virtual-stages' default with it.
  const bool v_given = o.app && o.app->count("--virtual-stages") > 0;
  if (c.schedule == ScheduleKind::DualPipeV && !v_given && o.virtual_stages == 1) c.virtual_stages = 2;
  // Megatron applies recompute modules only under selective granularity: say so rather than ignore them.
  if (p.job.knobs.recompute_modules != 0 && c.recompute != Recompute::Selective)
    return make_error(where, "--recompute", to_string(c.recompute),
                      "--recompute-modules " + recompute_modules_text(p.job.knobs.recompute_modules) +
                          " apply under --recompute selective only (Megatron's --recompute-granularity selective)",
                      "use --recompute selective, or drop --recompute-modules");
  auto layers = parse_layers(o.layers_per_stage, where);
  if (!layers) return layers.error();
  c.layers_per_stage = layers.value();
  if (auto split = named_split(p, o, c, where); !split) return split.error();
  ErrorList e = validate_config(p, c, where);
  if (!e.empty()) return e.front();
  ErrorList fe = validate_framework(p, c, where);
  if (!fe.empty()) return fe.front();
  return c;
}

ConfigOptions config_options_of(const ParallelConfig& cfg) {
  ConfigOptions o;
  o.tp = cfg.tp;
  o.pp = cfg.pp;
  o.ep = cfg.ep;
  o.cp = cfg.cp;
  o.zero = cfg.zero_stage;
  o.shard_group = cfg.shard_group;
  o.micro_batch = cfg.micro_batch_size;
  o.recompute = to_string(cfg.recompute);
  o.sequence_parallel = cfg.sequence_parallel;
  o.schedule = to_string(cfg.schedule);
  o.virtual_stages = cfg.virtual_stages;
  o.no_dp_overlap = !cfg.dp_overlap;
  o.ep = cfg.ep;
  o.etp = cfg.etp;
  for (size_t i = 0; i < cfg.layers_per_stage.size(); ++i)
    o.layers_per_stage += (i ? "," : "") + std::to_string(cfg.layers_per_stage[i]);
  return o;
}

// Config flags given on the command line replace the plan candidate's values.
static ConfigOptions merge_overrides(ConfigOptions base, const ConfigOptions& co) {
  CLI::App* a = co.app;
  if (given(a, "--tp")) base.tp = co.tp;
  if (given(a, "--pp")) base.pp = co.pp;
  if (given(a, "--ep")) base.ep = co.ep;
  if (given(a, "--zero")) base.zero = co.zero;
  if (given(a, "--shard-group")) base.shard_group = co.shard_group;
  if (given(a, "--micro-batch")) base.micro_batch = co.micro_batch;
  if (given(a, "--recompute")) base.recompute = co.recompute;
  if (given(a, "--sequence-parallel")) base.sequence_parallel = co.sequence_parallel;
  if (given(a, "--schedule")) base.schedule = co.schedule;
  if (given(a, "--virtual-stages")) base.virtual_stages = co.virtual_stages;
  if (given(a, "--no-dp-overlap")) base.no_dp_overlap = co.no_dp_overlap;
  if (given(a, "--cp")) base.cp = co.cp;
  if (given(a, "--etp")) base.etp = co.etp;
  const bool reshaped = given(a, "--pp") || given(a, "--virtual-stages");
  if (given(a, "--layers-per-stage")) base.layers_per_stage = co.layers_per_stage;
  else if (reshaped || given(a, "--pipeline-split")) base.layers_per_stage.clear();  // the old split no longer matches
  if (given(a, "--pipeline-split")) base.pipeline_split = co.pipeline_split;
  return base;
}

static Result<bool> reject_problem_flags(const ProblemOptions& po) {
  for (const char* f : {"--model", "--hardware", "--gpus", "--global-batch", "--seq", "--dtype",
                        "--bytes-per-param", "--framework", "--allow-tp-across-nodes", "--profiles-dir",
                        "--mtp-layers"})
    if (given(po.app, f) && !(po.allow_tp_flag_with_plan && std::string(f) == "--allow-tp-across-nodes"))
      return make_error(kCmd, f, "", "cannot be combined with --plan",
                        "the plan file already holds the problem; drop one of them");
  return true;
}

Result<Setup> resolve_setup(const ProblemOptions& po, const ConfigOptions& co,
                            const PlanInputOptions& plan) {
  Setup s;
  if (plan.plan.empty()) {
    auto p = load_problem(po);
    if (!p) return p.error();
    s.problem = std::move(p).value();
    auto c = make_config(s.problem, co);
    if (!c) return c.error();
    s.config = c.value();
    return s;
  }
  if (auto r = reject_problem_flags(po); !r) return r.error();
  auto pf = load_plan_file(plan.plan);
  if (!pf) return pf.error();
  auto cand = plan_candidate(pf.value(), plan.candidate, plan.plan);
  if (!cand) return cand.error();
  s.problem = pf.value().problem;
  if (po.allow_tp_flag_with_plan && po.allow_tp_across_nodes) s.problem.job.allow_tp_across_nodes = true;
  if (given(po.app, "--attention")) {
    auto k = parse_attention(po.attention);
    if (!k)
      return make_error(kCmd, "--attention", po.attention, "unknown attention kernel", "use fused or materialized");
    s.problem.job.knobs.attention = *k;
  }
  if (auto r = apply_feature_overrides(po.features, s.problem.job); !r) return r.error();
  auto c = make_config(s.problem, merge_overrides(config_options_of(cand.value()), co), plan.plan);
  if (!c) return c.error();
  s.config = c.value();
  return s;
}

Result<bool> check_format(const OutputOptions& o) {
  if (o.format == "table" || o.format == "json" || o.format == "yaml") return true;
  return make_error(kCmd, "--format", o.format, "unknown format", "use table, json or yaml");
}

// write_text_file: cli/output_file.cpp (temporary file + rename).

Result<bool> emit(const OutputOptions& o, const std::string& text) {
  if (!o.output.empty()) return write_text_file(o.output, text);
  std::cout << text;
  std::cout.flush();
  return true;
}

int report_error(const Error& e) {
  std::cerr << "meshplan: " << e.one_line() << "\n";
  return kExitBadInput;
}

}  // namespace meshplan::cli
