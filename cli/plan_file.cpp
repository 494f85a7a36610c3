// Plan files (meshplan.plan/1): writing the self-contained JSON and reading it back with Errors.
#include "cli/plan_file.h"

#include <optional>

#include "cli/feature_options.h"
#include "cli/report_json.h"
#include "core/moe_load.h"
#include "core/framework.h"
#include "core/io.h"
#include "core/limits.h"

namespace meshplan::cli {

static const char* kPlanSchema = "meshplan.plan/1";

std::string plan_file_json(const PlanFile& plan) {
  ojson j;
  j["schema"] = kPlanSchema;
  ojson problem;
  problem["model"] = ojson::parse(model_to_json(plan.problem.model));
  problem["hardware"] = ojson::parse(hardware_to_json(plan.problem.hardware));
  problem["job"] = job_object(plan.problem.job);
  j["problem"] = problem;
  ojson cands = ojson::array();
  for (const auto& e : plan.candidates) cands.push_back(estimate_object(plan.problem, e));
  j["candidates"] = cands;
  j["searched"] = plan.searched;
  ojson rejected = ojson::object();
  for (const auto& [reason, n] : plan.rejected) rejected[reason] = n;  // std::map: sorted keys
  j["rejected"] = rejected;
  j["provenance"] = provenance_object(plan.problem);
  return format_json(j.dump());
}

namespace {

// Typed reads out of the plan JSON; the first defect is kept, later reads return defaults.
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}
  std::optional<Error> error;

  const ojson* at(const ojson& obj, const std::string& key, const std::string& path, bool required) {
    if (error) return nullptr;
    if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) {
      if (required) fail(path, "", "missing required key");
      return nullptr;
    }
    return &obj[key];
  }
  int64_t integer(const ojson& obj, const std::string& key, const std::string& path,
                  std::optional<int64_t> dflt = std::nullopt) {
    const ojson* v = at(obj, key, path, !dflt);
    if (!v) return dflt.value_or(0);
    if (!v->is_number_integer()) return fail(path, v->dump(), "must be an integer"), dflt.value_or(0);
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return fail(path, v->dump(), "is too large (accepted up to " + std::to_string(INT64_MAX) + ")"),
             dflt.value_or(0);
    return v->get<int64_t>();
  }
  /// An integer in [lo, hi] (a degree or count that is narrowed to int or multiplied later).
  int64_t integer_in(const ojson& obj, const std::string& key, const std::string& path,
                     std::optional<int64_t> dflt, int64_t lo, int64_t hi) {
    const int64_t v = integer(obj, key, path, dflt);
    if (!error && (v < lo || v > hi))
      fail(path, std::to_string(v), "must be in " + limits::range_text(lo, hi));
    return error ? dflt.value_or(lo) : v;
  }
  double number(const ojson& obj, const std::string& key, const std::string& path) {
    const ojson* v = at(obj, key, path, false);  // estimate numbers are optional (recomputable)
    if (!v) return 0.0;
    if (!v->is_number()) return fail(path, v->dump(), "must be a number"), 0.0;
    return v->get<double>();
  }
  bool boolean(const ojson& obj, const std::string& key, const std::string& path, std::optional<bool> dflt) {
    const ojson* v = at(obj, key, path, !dflt);
    if (!v) return dflt.value_or(false);
    if (!v->is_boolean()) return fail(path, v->dump(), "must be true or false"), dflt.value_or(false);
    return v->get<bool>();
  }
  std::string text(const ojson& obj, const std::string& key, const std::string& path,
                   std::optional<std::string> dflt = std::nullopt) {
    const ojson* v = at(obj, key, path, !dflt);
    if (!v) return dflt.value_or("");
    if (!v->is_string()) return fail(path, v->dump(), "must be a string"), dflt.value_or("");
    return v->get<std::string>();
  }
  void fail(const std::string& field, const std::string& value, const std::string& message,
            const std::string& hint = "write plan files with meshplan plan/estimate --output") {
    if (!error) error = make_error(file_, field, value, message, hint);
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

Error prefixed(Error e, const std::string& prefix) {
  e.field = e.field.empty() ? prefix : prefix + "." + e.field;
  return e;
}

Job read_job(JsonReader& r, const ojson& j) {
  Job job;
  job.gpus = r.integer(j, "gpus", "problem.job.gpus");
  job.global_batch = r.integer(j, "global_batch", "problem.job.global_batch");
  job.seq_len = r.integer(j, "seq_len", "problem.job.seq_len");
  job.dtype = r.text(j, "dtype", "problem.job.dtype", std::string("bf16"));
  job.allow_tp_across_nodes = r.boolean(j, "allow_tp_across_nodes", "problem.job.allow_tp_across_nodes", false);
  const std::string fw = r.text(j, "framework", "problem.job.framework", std::string("meshplan"));
  if (auto f = parse_framework(fw)) job.framework = *f;
  else r.fail("problem.job.framework", fw, "unknown framework", framework_names());
  job.knobs = framework_knobs(framework_spec(job.framework));  // as options.cpp: kernel, ZeRO-3 granularity
  const std::string att = r.text(j, "attention", "problem.job.attention", std::string("fused"));
  if (auto k = parse_attention(att)) job.knobs.attention = *k;
  else r.fail("problem.job.attention", att, "unknown attention kernel", "fused or materialized");
  std::string conv = "default";
  if (const ojson* b = r.at(j, "bytes_per_param", "problem.job.bytes_per_param", false))
    conv = r.text(*b, "convention", "problem.job.bytes_per_param.convention", std::string("default"));
  if (auto c = parse_param_convention(conv)) job.convention = *c;
  else r.fail("problem.job.bytes_per_param.convention", conv, "unknown convention",
              "default, megatron or fp32-grads");
  if (!r.error)
    if (auto f = read_job_features(j, r.file(), "problem.job", job); !f) r.error = f.error();
  return job;
}

void read_config(JsonReader& r, const ojson& j, const std::string& at, ParallelConfig& c) {
  using limits::kMaxDegree;
  c.tp = static_cast<int>(r.integer_in(j, "tp", at + ".tp", std::nullopt, 1, kMaxDegree));
  c.pp = static_cast<int>(r.integer_in(j, "pp", at + ".pp", std::nullopt, 1, kMaxDegree));
  c.dp = static_cast<int>(r.integer_in(j, "dp", at + ".dp", std::nullopt, 1, limits::kMaxGpus));
  c.cp = static_cast<int>(r.integer_in(j, "cp", at + ".cp", 1, 1, kMaxDegree));
  c.zero_stage = static_cast<int>(r.integer_in(j, "zero_stage", at + ".zero_stage", 0, 0, 3));
  // HSDP shard group (core/hsdp_config.h); absent = 0, shard over all DP ranks.
  c.shard_group = static_cast<int>(r.integer_in(j, "shard_group", at + ".shard_group", 0, 0, limits::kMaxGpus));
  c.micro_batch_size = r.integer_in(j, "micro_batch_size", at + ".micro_batch_size", std::nullopt, 1,
                                    limits::kMaxGlobalBatch);
  c.num_micro_batches = r.integer_in(j, "num_micro_batches", at + ".num_micro_batches", std::nullopt, 1,
                                     limits::kMaxGlobalBatch);
  const std::string rc = r.text(j, "recompute", at + ".recompute", std::string("none"));
  const std::string sk = r.text(j, "schedule", at + ".schedule", std::string("1f1b"));
  if (auto v = parse_recompute(rc)) c.recompute = *v;
  else r.fail(at + ".recompute", rc, "unknown mode", "none, selective or full");
  if (auto v = parse_schedule(sk)) c.schedule = *v;
  else r.fail(at + ".schedule", sk, "unknown schedule", "gpipe, 1f1b, interleaved, zb-h1 or dualpipev");
  c.sequence_parallel = r.boolean(j, "sequence_parallel", at + ".sequence_parallel", false);
  c.virtual_stages = static_cast<int>(r.integer_in(j, "virtual_stages", at + ".virtual_stages", 1, 1, kMaxDegree));
  c.dp_overlap = r.boolean(j, "dp_overlap", at + ".dp_overlap", true);
  c.ep = static_cast<int>(r.integer_in(j, "ep", at + ".ep", 1, 1, kMaxDegree));     // MoE only; absent = 1
  c.etp = static_cast<int>(r.integer_in(j, "etp", at + ".etp", 1, 1, kMaxDegree));
  if (const ojson* l = r.at(j, "layers_per_stage", at + ".layers_per_stage", false)) {
    if (!l->is_array()) r.fail(at + ".layers_per_stage", "", "must be a list of integers");
    for (size_t i = 0; l->is_array() && i < l->size(); ++i) {
      const ojson& item = (*l)[i];
      if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() > limits::kMaxLayers ||
          i >= static_cast<size_t>(limits::kMaxLayers)) {
        r.fail(at + ".layers_per_stage[" + std::to_string(i) + "]", item.is_primitive() ? item.dump() : "",
               "must be an integer in " + limits::range_text(int64_t{0}, limits::kMaxLayers));
        break;
      }
      c.layers_per_stage.push_back(static_cast<int>(item.get<int64_t>()));
    }
  }
}

std::optional<Bottleneck> parse_bottleneck(const std::string& s) {
  for (auto b : {Bottleneck::Compute, Bottleneck::TpComm, Bottleneck::PpBubble, Bottleneck::PpComm,
                 Bottleneck::DpComm, Bottleneck::Optimizer, Bottleneck::Memory, Bottleneck::Host})
    if (s == to_string(b)) return b;
  return std::nullopt;
}

// The printed (rounded) numbers of one candidate; absent ones stay 0.
void read_numbers(JsonReader& r, const ojson& j, const std::string& at, StepEstimate& e) {
  static const ojson empty = ojson::object();
  const ojson* m = r.at(j, "memory", at + ".memory", false);
  const ojson& mem = m ? *m : empty;
  e.memory.peak_bytes = r.number(mem, "peak_bytes", at + ".memory.peak_bytes");
  e.memory.weights_bytes = r.number(mem, "weights_bytes", at + ".memory.weights_bytes");
  e.memory.gradients_bytes = r.number(mem, "gradients_bytes", at + ".memory.gradients_bytes");
  e.memory.optimizer_bytes = r.number(mem, "optimizer_bytes", at + ".memory.optimizer_bytes");
  e.memory.activations_bytes = r.number(mem, "activations_bytes", at + ".memory.activations_bytes");
  e.memory.other_bytes = r.number(mem, "other_bytes", at + ".memory.other_bytes");
  e.usable_memory_bytes = r.number(mem, "usable_bytes", at + ".memory.usable_bytes");
  const ojson* t = r.at(j, "time", at + ".time", false);
  const ojson& tim = t ? *t : empty;
  e.time.step_s = r.number(tim, "step_s", at + ".time.step_s");
  e.time.compute_s = r.number(tim, "compute_s", at + ".time.compute_s");
  e.time.tp_comm_s = r.number(tim, "tp_comm_s", at + ".time.tp_comm_s");
  e.time.pp_comm_s = r.number(tim, "pp_comm_s", at + ".time.pp_comm_s");
  e.time.pp_bubble_s = r.number(tim, "pp_bubble_s", at + ".time.pp_bubble_s");
  e.time.dp_comm_s = r.number(tim, "dp_comm_s", at + ".time.dp_comm_s");
  e.time.optimizer_s = r.number(tim, "optimizer_s", at + ".time.optimizer_s");
  const ojson* th = r.at(j, "throughput", at + ".throughput", false);
  const ojson& thr = th ? *th : empty;
  e.throughput.tokens_per_s = r.number(thr, "tokens_per_s", at + ".throughput.tokens_per_s");
  e.throughput.tflops_per_gpu = r.number(thr, "tflops_per_gpu", at + ".throughput.tflops_per_gpu");
  e.throughput.mfu = r.number(thr, "mfu", at + ".throughput.mfu");
  e.throughput.hfu = r.number(thr, "hfu", at + ".throughput.hfu");
  e.fits = r.boolean(j, "fits", at + ".fits", false);
  if (auto b = parse_bottleneck(r.text(j, "bottleneck", at + ".bottleneck", std::string("compute"))))
    e.bottleneck = *b;
}

Result<Problem> read_problem(JsonReader& r, const ojson& root) {
  const ojson* pj = r.at(root, "problem", "problem", true);
  if (!pj) return *r.error;
  const ojson* mj = r.at(*pj, "model", "problem.model", true);
  const ojson* hj = r.at(*pj, "hardware", "problem.hardware", true);
  const ojson* jj = r.at(*pj, "job", "problem.job", true);
  if (r.error) return *r.error;
  Problem p;
  auto model = parse_model(mj->dump(), r.file());
  if (!model) return prefixed(model.error(), "problem.model");
  p.model = model.value();
  auto hw = parse_hardware(hj->dump(), r.file());
  if (!hw) return prefixed(hw.error(), "problem.hardware");
  p.hardware = hw.value();
  p.job = read_job(r, *jj);
  if (r.error) return *r.error;
  ErrorList e = validate_job(p.job, r.file());
  for (Error& x : validate_moe_load(p.model, p.job, r.file())) e.push_back(std::move(x));  // core/moe_load.h
  if (!e.empty()) return prefixed(e.front(), "problem.job");
  return p;
}

}  // namespace

Result<PlanFile> parse_plan_file(const std::string& text, const std::string& file) {
  if (auto bad = check_text_input(text, file)) return *bad;  // UTF-8, nesting depth
  ojson root = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return make_error(file, "", "", "not a JSON object (plan files are JSON)",
                      "write plan files with meshplan plan/estimate --output FILE");
  JsonReader r(file);
  const std::string schema = r.text(root, "schema", "schema");
  if (!r.error && schema != kPlanSchema)
    r.fail("schema", schema, "unsupported plan schema", std::string("expected ") + kPlanSchema);
  if (r.error) return *r.error;
  PlanFile plan;
  auto problem = read_problem(r, root);
  if (!problem) return problem.error();
  plan.problem = problem.value();
  const ojson* cands = r.at(root, "candidates", "candidates", true);
  if (cands && !cands->is_array()) r.fail("candidates", "", "must be a list");
  for (size_t i = 0; cands && cands->is_array() && i < cands->size() && !r.error; ++i) {
    const std::string at = "candidates[" + std::to_string(i) + "]";
    const ojson* cfg = r.at((*cands)[i], "config", at + ".config", true);
    StepEstimate e;
    if (cfg) read_config(r, *cfg, at + ".config", e.config);
    read_numbers(r, (*cands)[i], at, e);
    plan.candidates.push_back(e);
  }
  plan.searched = r.integer(root, "searched", "searched", 0);
  if (const ojson* rej = r.at(root, "rejected", "rejected", false); rej && rej->is_object())
    for (auto it = rej->begin(); it != rej->end(); ++it)
      plan.rejected[it.key()] = r.integer(*rej, it.key(), "rejected." + it.key());
  if (r.error) return *r.error;
  return plan;
}

Result<PlanFile> load_plan_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text)
    return make_error("command line", "--plan", path, "cannot be read: " + text.error().message,
                      "pass a plan file written by meshplan plan/estimate --output");
  return parse_plan_file(text.value(), path);
}

Result<ParallelConfig> plan_candidate(const PlanFile& plan, int index, const std::string& file) {
  const int n = static_cast<int>(plan.candidates.size());
  if (index < 0 || index >= n)
    return make_error("command line", "--candidate", std::to_string(index),
                      file + " has " + std::to_string(n) + " candidate(s)",
                      n > 0 ? "use 0.." + std::to_string(n - 1) : "re-run meshplan plan");
  return plan.candidates[static_cast<size_t>(index)].config;
}

}  // namespace meshplan::cli
