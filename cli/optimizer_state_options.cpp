// Megatron-Core's precision-aware optimizer states: flags, job JSON and plan-file reading
// (cli/optimizer_state_options.h).
#include "cli/optimizer_state_options.h"

#include <CLI/CLI.hpp>

#include "cli/help_text.h"
#include "core/framework.h"
#include "core/optimizer_states.h"

namespace meshplan::cli {

static const char* kCmd = "command line";

void add_optimizer_state_options(CLI::App* sub, OptimizerStateOptions& o) {
  sub->add_flag("--precision-aware-optimizer", o.precision_aware,
                "Megatron-Core's --use-precision-aware-optimizer: Transformer Engine's FusedAdam keeps the states "
                "(with bf16 weights the fp32 main params as their 16-bit remainder, 2 bytes: 10 bytes per "
                "parameter with fp32 moments); needs the distributed optimizer (ZeRO 1+) and --framework megatron "
                "or nemo; implied by any state dtype below other than fp32");
  allowed_values(sub->add_option("--main-params-dtype", o.main_params,
                                 "Megatron-Core's precision-aware optimizer (--use-precision-aware-optimizer): dtype "
                                 "of the main (master) parameters the optimizer keeps; needs --framework megatron "
                                 "or nemo (default fp32)"),
                 {"fp32", "fp16"});
  allowed_values(sub->add_option("--exp-avg-dtype", o.exp_avg,
                                 "Precision-aware optimizer: dtype Adam's first moment is stored in (bf16 halves "
                                 "it, as DeepSeek-V3 and Megatron-Bridge's DeepSeek and Moonlight recipes run); "
                                 "needs --framework megatron or nemo (default fp32)"),
                 {"fp32", "fp16", "bf16", "fp8"});
  allowed_values(sub->add_option("--exp-avg-sq-dtype", o.exp_avg_sq,
                                 "Precision-aware optimizer: dtype of Adam's second moment; needs --framework "
                                 "megatron or nemo (default fp32)"),
                 {"fp32", "fp16", "bf16", "fp8"});
}

// Only Megatron-Core (megatron, nemo) runs the precision-aware optimizer.
static Result<bool> needs_megatron(const Job& job, const std::string& where, const std::string& field,
                                   const std::string& value) {
  if (runs_megatron_core_option(job.framework)) return true;
  return make_error(where, field, value,
                    "is Megatron-Core's precision-aware optimizer; framework " + std::string(to_string(job.framework)) +
                        " keeps fp32 optimizer states",
                    "add --framework megatron or nemo, or drop it");
}

// One state's value: parsed, accepted by Megatron-Core, and only under a framework that runs it.
static Result<StateDtype> state_value(const Job& job, const std::string& where, const std::string& field,
                                      const std::string& state, const std::string& value) {
  const auto d = parse_state_dtype(value);
  if (!d) return make_error(where, field, value, "unknown dtype", "fp32, fp16, bf16 or fp8");
  if (const std::string rule = state_dtype_rule(state, *d); !rule.empty())
    return make_error(where, field, value, "Megatron-Core does not store the " + state + " in it", "use " + rule);
  if (*d != StateDtype::Fp32)
    if (auto ok = needs_megatron(job, where, field, value); !ok) return ok.error();
  return *d;
}

Result<bool> apply_optimizer_state_options(CLI::App* app, const OptimizerStateOptions& o, Job& job) {
  OptimizerStates& states = job.knobs.optimizer_states;
  if (app && app->count("--precision-aware-optimizer") > 0) {
    if (auto ok = needs_megatron(job, kCmd, "--precision-aware-optimizer", "true"); !ok) return ok.error();
    states.precision_aware = o.precision_aware;
  }
  for (auto [flag, state, value, out] :
       {std::tuple{"--main-params-dtype", "main_params", &o.main_params, &job.knobs.optimizer_states.main_params},
        std::tuple{"--exp-avg-dtype", "exp_avg", &o.exp_avg, &job.knobs.optimizer_states.exp_avg},
        std::tuple{"--exp-avg-sq-dtype", "exp_avg_sq", &o.exp_avg_sq, &job.knobs.optimizer_states.exp_avg_sq}}) {
    if (!app || app->count(flag) == 0) continue;
    auto d = state_value(job, kCmd, flag, state, *value);
    if (!d) return d.error();
    *out = d.value();
    if (d.value() != StateDtype::Fp32) states.precision_aware = true;  // Megatron needs the flag for the dtype
  }
  return true;
}

void add_optimizer_state_json(ojson& j, const Job& job) {
  const OptimizerStates& s = job.knobs.optimizer_states;
  if (default_states(s)) return;
  j["optimizer_states"] = {{"precision_aware", s.precision_aware},
                           {"main_params", to_string(s.main_params)},
                           {"exp_avg", to_string(s.exp_avg)},
                           {"exp_avg_sq", to_string(s.exp_avg_sq)}};
}

Result<bool> read_optimizer_state_json(const ojson& j, const std::string& file, const std::string& at, Job& job) {
  if (!j.is_object() || !j.contains("optimizer_states")) return true;
  const ojson& o = j["optimizer_states"];
  const std::string base = at + ".optimizer_states";
  if (!o.is_object()) return make_error(file, base, o.dump(), "must be an object", "{\"exp_avg\": \"bf16\", ...}");
  for (const auto& [key, value] : o.items())
    if (key != "precision_aware" && key != "main_params" && key != "exp_avg" && key != "exp_avg_sq")
      return make_error(file, base + "." + key, value.dump(), "unknown key",
                        "precision_aware, main_params, exp_avg or exp_avg_sq");
  OptimizerStates& states = job.knobs.optimizer_states;
  if (o.contains("precision_aware")) {
    if (!o["precision_aware"].is_boolean())
      return make_error(file, base + ".precision_aware", o["precision_aware"].dump(), "must be true or false", "");
    if (o["precision_aware"].get<bool>())
      if (auto ok = needs_megatron(job, file, base + ".precision_aware", "true"); !ok) return ok.error();
    states.precision_aware = o["precision_aware"].get<bool>();
  }
  for (auto [key, out] : {std::pair{"main_params", &job.knobs.optimizer_states.main_params},
                          std::pair{"exp_avg", &job.knobs.optimizer_states.exp_avg},
                          std::pair{"exp_avg_sq", &job.knobs.optimizer_states.exp_avg_sq}}) {
    if (!o.contains(key)) continue;
    if (!o[key].is_string()) return make_error(file, base + "." + key, o[key].dump(), "must be a string", "e.g. \"bf16\"");
    auto d = state_value(job, file, base + "." + key, key, o[key].get<std::string>());
    if (!d) return d.error();
    *out = d.value();
  }
  if (!states.precision_aware && !default_states(OptimizerStates{false, states.main_params, states.exp_avg, states.exp_avg_sq}))
    return make_error(file, base + ".precision_aware", "false", "a state dtype other than fp32 needs it",
                      "set precision_aware true");
  return true;
}

}  // namespace meshplan::cli
