// Shared CLI flags (problem, configuration, output) and their conversion into Problem/ParallelConfig.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"
#include "cli/feature_options.h"
#include "core/parallel_config.h"

namespace CLI {
class App;
}

namespace meshplan::cli {

/// What to train: --model --hardware --gpus --global-batch [--seq] [--dtype] [--bytes-per-param]
/// [--allow-tp-across-nodes] [--attention] [--profiles-dir]. Required flags are checked by load_problem (not by
/// CLI11) so that commands can also take them from a plan file.
struct ProblemOptions {
  std::string model;                    // path of a model file (YAML/JSON)
  std::string hardware;                 // shipped profile stem or a path
  int64_t gpus = 0;
  int64_t global_batch = 0;             // sequences per optimizer step
  int64_t seq = 0;                      // 0 = model's max_position_embeddings, else 2048
  std::string dtype = "bf16";           // compute dtype for the profile's peak FLOP/s
  std::string bytes_per_param = "default";  // default (16) | megatron (18) | fp32-grads (20)
  std::string framework = "meshplan";   // --framework: whose rules and conventions (core/framework.h)
  bool allow_tp_across_nodes = false;
  bool allow_tp_flag_with_plan = false;  // run: --allow-tp-across-nodes may be added to --plan
  std::string attention = "fused";      // fused | materialized (attention kernel, core/framework_knobs.h)
  std::string profiles_dir;             // empty = default_profiles_dir()
  int64_t mtp_layers = 0;               // --mtp-layers: overrides the model file's mtp_layers when given
  CLI::App* app = nullptr;              // set by add_problem_options; tells which flags were given
  FeatureOptions features;              // --cp-comm --fp8 --grad-compression (cli/feature_options.h)
};

/// How to split it: --tp --pp [--zero] [--micro-batch] [--recompute] [--sequence-parallel]
/// [--schedule] [--virtual-stages] [--no-dp-overlap] [--layers-per-stage a,b,...].
struct ConfigOptions {
  int tp = 1;
  int pp = 1;
  int zero = 0;
  int shard_group = 0;                  // --shard-group: HSDP shard group in DP ranks (0 = all)
  int64_t micro_batch = 1;              // sequences per micro-batch per DP rank
  std::string recompute = "none";       // none | selective | full
  bool sequence_parallel = false;
  std::string schedule = "1f1b";        // gpipe | 1f1b | interleaved | zb-h1
  int virtual_stages = 1;
  bool no_dp_overlap = false;
  std::string layers_per_stage;         // comma-separated layers per chunk; empty = even split
  std::string pipeline_split;           // --pipeline-split even|balanced|embedding-loss: a named split
                                        // (planner/pipeline_balance.h) instead of --layers-per-stage
  int ep = 1;                           // expert parallel (MoE experts split over ep DP ranks)
  int cp = 1;                           // context parallel (each sequence split over cp ranks)
  CLI::App* app = nullptr;              // set by add_config_options; tells which flags were given
  int etp = 0;                          // --etp: expert tensor parallel; 0 = Megatron-Core's default,
                                        // tp for MoE models (1 for dense)
};

/// --format table|json|yaml (default table) and --output FILE.
struct OutputOptions {
  std::string format = "table";
  std::string output;                   // empty = stdout
};

/// --plan FILE [--candidate i]: take problem and configuration from a plan file (meshplan.plan/1).
struct PlanInputOptions {
  std::string plan;                     // empty = not given
  int candidate = 0;                    // index into "candidates" (0 = best)
};

void add_problem_options(CLI::App* sub, ProblemOptions& o);
void add_config_options(CLI::App* sub, ConfigOptions& o);
void add_output_options(CLI::App* sub, OutputOptions& o);
void add_plan_input_options(CLI::App* sub, PlanInputOptions& o);

/// Directory of the shipped hardware profiles: $MESHPLAN_PROFILES if set, else
/// <binary>/../share/meshplan/hardware-profiles if it exists, else MESHPLAN_SOURCE_DIR/hardware-profiles.
std::string default_profiles_dir();

/// Loads model and hardware (core/io), builds the Job and validates model, hardware and job.
/// Returns the first Error (missing required flag, unreadable file, bad value, ...).
Result<Problem> load_problem(const ProblemOptions& o);

/// dp = gpus / (tp*pp), num_micro_batches = global_batch / (dp*micro_batch); parses the enum flags;
/// runs validate_config and returns its first Error. `where` names the origin (default "command line").
Result<ParallelConfig> make_config(const Problem& p, const ConfigOptions& o,
                                   const std::string& where = "command line");

/// The flags that reproduce `cfg` (inverse of make_config, for plan files and overrides).
ConfigOptions config_options_of(const ParallelConfig& cfg);

/// A problem together with one configuration, from flags or from a plan file.
struct Setup {
  Problem problem;
  ParallelConfig config;
};

/// With --plan: problem and candidate `--candidate` from the plan file; config flags given explicitly
/// on the command line override the candidate's (problem flags are then an error). Without --plan:
/// load_problem + make_config from the flags.
Result<Setup> resolve_setup(const ProblemOptions& po, const ConfigOptions& co,
                            const PlanInputOptions& plan);

/// Checks --format is table|json|yaml.
Result<bool> check_format(const OutputOptions& o);

/// Writes `text` to `path` (whole file) through a temporary file and a rename, so that an existing
/// file is either kept or replaced whole. An unwritable path is an Error naming it.
Result<bool> write_text_file(const std::string& path, const std::string& text);

/// Checks up front that `path` (empty = none) can be written: not a directory, and a writable file
/// or a missing file in a writable directory. For commands that work a long time before writing.
Result<bool> check_writable(const std::string& path);

/// Writes `text` to --output if given, else to stdout.
Result<bool> emit(const OutputOptions& o, const std::string& text);

/// Prints "meshplan: <error.one_line()>" as one line on stderr and returns kExitBadInput.
int report_error(const Error& e);

}  // namespace meshplan::cli
