// `meshplan scale`: Chinchilla compute-optimal parameters and tokens for a budget, 6ND, training days.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/report.h"
#include "cli/report_json.h"
#include "core/human_format.h"
#include "core/limits.h"
#include "core/io.h"
#include "costmodel/chinchilla.h"
#include "meshplan_version.h"

namespace meshplan::cli {

namespace {

struct ScaleArgs {
  double compute_flops = 0;
  std::string hardware;
  int64_t gpus = 0;
  double days = 0;
  double mfu = 0.4;
  double tokens_per_parameter = 20.0;
  std::string dtype = "bf16";
  std::string profiles_dir;
  OutputOptions output;
  CLI::App* app = nullptr;
};

// The cluster side: peak per GPU from the profile, GPU count, utilisation.
struct Cluster {
  std::string hardware;
  int64_t gpus = 0;
  double peak_flops = 0;
  double mfu = 0;
};

struct Budget {
  double flops = 0;
  std::string from;                // "compute" | "cluster"
  std::optional<Cluster> cluster;  // set when --hardware was given
};

bool given(const ScaleArgs& a, const char* flag) { return a.app->count(flag) > 0; }

Error bad(const char* flag, const std::string& value, const std::string& msg, const std::string& hint) {
  return make_error("command line", flag, value, msg, hint);
}

Result<Cluster> load_cluster(const ScaleArgs& a) {
  if (!given(a, "--gpus")) return bad("--gpus", "", "is required with --hardware", "e.g. --gpus 1024");
  if (a.gpus <= 0 || a.gpus > limits::kMaxGpus)
    return bad("--gpus", std::to_string(a.gpus), "must be in " + limits::range_text(int64_t{1}, limits::kMaxGpus),
               "e.g. --gpus 1024");
  if (!(a.mfu > 0.0 && a.mfu <= 1.0))
    return bad("--mfu", format_number(a.mfu), "must be in (0, 1]", "e.g. --mfu 0.4");
  auto hw = load_hardware(a.hardware, a.profiles_dir.empty() ? default_profiles_dir() : a.profiles_dir);
  if (!hw) return hw.error();
  const double peak = hw.value().peak_flops_for(a.dtype);
  if (peak <= 0.0) return bad("--dtype", a.dtype, "not listed in profile " + hw.value().name, "e.g. bf16");
  return Cluster{hw.value().name, a.gpus, peak, a.mfu};
}

Result<Budget> make_budget(const ScaleArgs& a) {
  const bool compute = given(a, "--compute");
  if (!compute && a.hardware.empty())
    return bad("--compute", "", "a budget is required",
               "pass --compute FLOPS, or --hardware H --gpus N --days D [--mfu m]");
  if (!(a.tokens_per_parameter > 0.0 && a.tokens_per_parameter <= 1e6))
    return bad("--tokens-per-param", format_number(a.tokens_per_parameter), "must be in (0, 1e6]", "20");
  Budget b;
  if (!a.hardware.empty()) {
    auto c = load_cluster(a);
    if (!c) return c.error();
    b.cluster = c.value();
  }
  if (compute) {
    if (given(a, "--days"))
      return bad("--days", format_number(a.days), "cannot be combined with --compute",
                 "give the budget either as FLOPs or as cluster days");
    if (!(a.compute_flops > 0.0 && a.compute_flops <= 1e40))  // also refuses NaN and infinity
      return bad("--compute", format_number(a.compute_flops), "must be in (0, 1e40] FLOPs", "e.g. --compute 1e23");
    b.flops = a.compute_flops;
    b.from = "compute";
    return b;
  }
  if (!given(a, "--days")) return bad("--days", "", "is required with --hardware", "e.g. --days 30");
  if (!(a.days > 0.0 && a.days <= 36500))  // also refuses NaN and infinity
    return bad("--days", format_number(a.days), "must be in (0, 36500] (100 years)", "e.g. --days 30");
  b.flops = cluster_flops(b.cluster->gpus, b.cluster->peak_flops, a.days, b.cluster->mfu);
  b.from = "cluster";
  return b;
}

ojson allocation_object(const char* rule, const Allocation& al, const Budget& b) {
  ojson j = {{"rule", rule},
             {"parameters", report_number(al.parameters)},
             {"tokens", report_number(al.tokens)},
             {"tokens_per_parameter", report_number(al.tokens / al.parameters)},
             {"flops_6nd", report_number(al.flops)},
             {"predicted_loss", report_number(al.loss)}};
  if (b.cluster)
    j["training_days"] =
        report_number(training_days(al.flops, b.cluster->gpus, b.cluster->peak_flops, b.cluster->mfu));
  return j;
}

ojson scale_object(const ScaleArgs& a, const Budget& b) {
  ojson j;
  j["schema"] = "meshplan.scale/1";
  j["budget"] = {{"flops", report_number(b.flops)}, {"from", b.from}};
  if (b.cluster)
    j["cluster"] = {{"hardware", b.cluster->hardware}, {"gpus", b.cluster->gpus},
                    {"dtype", a.dtype}, {"peak_tflops_per_gpu", report_number(b.cluster->peak_flops / 1e12)},
                    {"mfu", report_number(b.cluster->mfu)}};
  ojson list = ojson::array();
  list.push_back(allocation_object("tokens_per_parameter",
                                   allocation_tokens_per_parameter(b.flops, a.tokens_per_parameter), b));
  list.push_back(allocation_object("hoffmann2022_approach3", allocation_approach3(b.flops), b));
  j["allocations"] = list;
  j["provenance"] = {{"tool", "meshplan"}, {"version", MESHPLAN_VERSION}, {"git_sha", MESHPLAN_GIT_SHA}};
  return j;
}

// Loss to 4 significant digits: differences between the two rules show in the third decimal.
std::string fixed4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string table_row(const ojson& al) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "  %-24s %12s %12s %10s %12s %8s %10s\n",
                al["rule"].get<std::string>().c_str(), human_count(al["parameters"].get<double>()).c_str(),
                human_count(al["tokens"].get<double>()).c_str(),
                human_count(al["tokens_per_parameter"].get<double>()).c_str(),
                human_scientific(al["flops_6nd"].get<double>()).c_str(),
                fixed4(al["predicted_loss"].get<double>()).c_str(),
                al.contains("training_days") ? human_count(al["training_days"].get<double>()).c_str() : "-");
  return buf;
}

std::string scale_table(const ojson& j) {
  std::string s = "meshplan scale: budget " + human_scientific(j["budget"]["flops"].get<double>()) + " FLOPs";
  if (j.contains("cluster")) {
    const ojson& c = j["cluster"];
    s += " on " + std::to_string(c["gpus"].get<int64_t>()) + " x " + c["hardware"].get<std::string>() +
         " (" + format_number(c["peak_tflops_per_gpu"].get<double>()) + " TFLOP/s " +
         c["dtype"].get<std::string>() + " at MFU " + format_number(c["mfu"].get<double>()) + ")";
  }
  char head[200];
  std::snprintf(head, sizeof head, "\n  %-24s %12s %12s %10s %12s %8s %10s\n", "rule", "parameters",
                "tokens", "tokens/N", "6ND FLOPs", "loss", "days");
  s += head;
  for (const auto& al : j["allocations"]) s += table_row(al);
  return s;
}

int run_scale(const ScaleArgs& a) {
  if (auto f = check_format(a.output); !f) return report_error(f.error());
  auto b = make_budget(a);
  if (!b) return report_error(b.error());
  const ojson j = scale_object(a, b.value());
  std::string text = a.output.format == "json" ? format_json(j.dump())
                     : a.output.format == "yaml" ? json_to_yaml(j.dump())
                                                 : scale_table(j);
  if (auto w = emit(a.output, text); !w) return report_error(w.error());
  return kExitOk;
}

}  // namespace

void add_scale_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ScaleArgs>();
  CLI::App* sub = app.add_subcommand(
      "scale", "Chinchilla compute-optimal parameters and tokens for a budget, 6ND, training days");
  a->app = sub;
  sub->add_option("--compute", a->compute_flops, "Training budget in FLOPs, e.g. 1e23");
  sub->add_option("--hardware", a->hardware, "Hardware profile (name or path) for the cluster");
  sub->add_option("--gpus", a->gpus, "GPUs in the cluster");
  sub->add_option("--days", a->days, "Days of training on the cluster (budget from the cluster)");
  sub->add_option("--mfu", a->mfu, "Model FLOPs utilisation assumed (default 0.4)");
  sub->add_option("--dtype", a->dtype, "Dtype for the profile's peak (default bf16)");
  sub->add_option("--tokens-per-param", a->tokens_per_parameter, "Tokens per parameter rule (default 20)");
  sub->add_option("--profiles-dir", a->profiles_dir, "Directory of hardware profiles (default: shipped)");
  add_output_options(sub, a->output);
  sub->callback([a, &exit_code] { exit_code = run_scale(*a); });
}

}  // namespace meshplan::cli
