// PyTorch FSDP1's forward_prefetch / backward_prefetch and the FSDP job's model code: flags, job JSON and
// plan-file reading.
#include "cli/fsdp_options.h"

#include <CLI/CLI.hpp>

#include "cli/help_text.h"
#include "core/framework.h"

namespace meshplan::cli {

static const char* kCmd = "command line";

void add_fsdp_options(CLI::App* sub, FsdpOptions& o) {
  allowed_values(sub->add_option("--fsdp-forward-prefetch", o.forward_prefetch,
                                 "PyTorch FSDP's forward_prefetch under ZeRO-3: on = the next unit's all-gather is "
                                 "issued before this unit's forward and hides behind it (FSDP2, what --export fsdp "
                                 "runs), off = FSDP1's forward_prefetch=False (Composer/llm-foundry): each unit's "
                                 "gather is issued by its own pre-forward hook and waits in the open; needs "
                                 "--framework fsdp (default on)"),
                 {"on", "off"});
  allowed_values(sub->add_option("--fsdp-backward-prefetch", o.backward_prefetch,
                                 "PyTorch FSDP's backward_prefetch under ZeRO-3: pre (BACKWARD_PRE: the next unit's "
                                 "gather runs under this unit's backward), post (BACKWARD_POST, Composer/llm-foundry's "
                                 "default: the gather waits after this unit's backward, its reduce-scatter runs under "
                                 "the next), none (gathers queued behind the reduce-scatters: all exposed); needs "
                                 "--framework fsdp (default pre, FSDP's default and FSDP2's)"),
                 {"pre", "post", "none"});
  allowed_values(sub->add_option("--fsdp-model-code", o.model_code,
                                 "Model code an FSDP job trains: fused (element-wise chains fused, as compiled or "
                                 "Transformer Engine code runs them) or fms (IBM's Foundation Model Stack Llama run "
                                 "eager, as fms-fsdp trains it: fp32 RMSNorm upcasts, SiLU and product as separate "
                                 "kernels, an fp32 broadcast-and-sum rotary embedding, GQA's K/V expanded by copy; "
                                 "costmodel/fms_llama_ops.h); needs --framework fsdp (default fused)"),
                 {"fused", "fms"});
}

static Result<bool> needs_fsdp(const Job& job, const std::string& where, const std::string& field,
                               const std::string& value, const char* what = "prefetch setting",
                               const char* why = " issues its own gathers") {
  if (job.framework == Framework::Fsdp) return true;
  return make_error(where, field, value,
                    std::string("is PyTorch FSDP's ") + what + "; framework " + to_string(job.framework) + why,
                    "add --framework fsdp, or drop the flag");
}

static const char* kModelCode = "model-code setting";
static const char* kModelCodeWhy = " is costed with its own model code";

Result<bool> apply_fsdp_options(CLI::App* app, const FsdpOptions& o, Job& job) {
  if (app && app->count("--fsdp-forward-prefetch") > 0) {
    if (auto ok = needs_fsdp(job, kCmd, "--fsdp-forward-prefetch", o.forward_prefetch); !ok) return ok.error();
    if (o.forward_prefetch != "on" && o.forward_prefetch != "off")
      return make_error(kCmd, "--fsdp-forward-prefetch", o.forward_prefetch, "must be on or off", "on or off");
    job.knobs.sharding.forward_prefetch = o.forward_prefetch == "on";
  }
  if (app && app->count("--fsdp-backward-prefetch") > 0) {
    if (auto ok = needs_fsdp(job, kCmd, "--fsdp-backward-prefetch", o.backward_prefetch); !ok) return ok.error();
    auto b = parse_backward_prefetch(o.backward_prefetch);
    if (!b)
      return make_error(kCmd, "--fsdp-backward-prefetch", o.backward_prefetch, "unknown backward prefetch",
                        "pre, post or none");
    job.knobs.sharding.backward_prefetch = *b;
  }
  if (app && app->count("--fsdp-model-code") > 0) {
    if (auto ok = needs_fsdp(job, kCmd, "--fsdp-model-code", o.model_code, kModelCode, kModelCodeWhy); !ok)
      return ok.error();
    if (o.model_code != "fused" && o.model_code != "fms")
      return make_error(kCmd, "--fsdp-model-code", o.model_code, "unknown model code", "fused or fms");
    job.knobs.fms_model_code = o.model_code == "fms";
  }
  return true;
}

void add_fsdp_job_json(ojson& j, const Job& job) {
  const ShardingKnobs def = framework_knobs(framework_spec(job.framework)).sharding;
  const ShardingKnobs& k = job.knobs.sharding;
  if (k.forward_prefetch != def.forward_prefetch) j["fsdp_forward_prefetch"] = k.forward_prefetch;
  if (k.backward_prefetch != def.backward_prefetch) j["fsdp_backward_prefetch"] = to_string(k.backward_prefetch);
  if (job.knobs.fms_model_code) j["fsdp_model_code"] = "fms";
}

Result<bool> read_fsdp_job_json(const ojson& j, const std::string& file, const std::string& at, Job& job) {
  if (!j.is_object()) return true;
  if (j.contains("fsdp_forward_prefetch")) {
    const ojson& v = j["fsdp_forward_prefetch"];
    const std::string field = at + ".fsdp_forward_prefetch";
    if (!v.is_boolean()) return make_error(file, field, v.dump(), "must be true or false", "");
    if (auto ok = needs_fsdp(job, file, field, v.dump()); !ok) return ok.error();
    job.knobs.sharding.forward_prefetch = v.get<bool>();
  }
  if (j.contains("fsdp_backward_prefetch")) {
    const ojson& v = j["fsdp_backward_prefetch"];
    const std::string field = at + ".fsdp_backward_prefetch";
    if (!v.is_string()) return make_error(file, field, v.dump(), "must be a string", "pre, post or none");
    auto b = parse_backward_prefetch(v.get<std::string>());
    if (!b) return make_error(file, field, v.get<std::string>(), "unknown backward prefetch", "pre, post or none");
    if (auto ok = needs_fsdp(job, file, field, v.get<std::string>()); !ok) return ok.error();
    job.knobs.sharding.backward_prefetch = *b;
  }
  if (j.contains("fsdp_model_code")) {
    const ojson& v = j["fsdp_model_code"];
    const std::string field = at + ".fsdp_model_code";
    if (!v.is_string()) return make_error(file, field, v.dump(), "must be a string", "fused or fms");
    const std::string code = v.get<std::string>();
    if (code != "fused" && code != "fms") return make_error(file, field, code, "unknown model code", "fused or fms");
    if (auto ok = needs_fsdp(job, file, field, code, kModelCode, kModelCodeWhy); !ok) return ok.error();
    job.knobs.fms_model_code = code == "fms";
  }
  return true;
}

}  // namespace meshplan::cli
