// `meshplan run`: trains a plan on MPI ranks with the CPU backend (launched by mpirun, or as one
// rank alone; --backend cuda through executor/backend_factory.h), prints per-step measurements and the predicted-vs-measured table (rank 0).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <functional>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/device_guard.h"
#include "cli/options.h"
#include "cli/report.h"
#include "cli/run_hosts.h"
#include "cli/help_text.h"
#include "cli/run_profile.h"
#include "cli/run_report.h"
#include "cli/selftest_gate.h"
#include "core/loss_chunk.h"
#include "costmodel/estimate.h"
#include "executor/backend_factory.h"
#include "executor/job_support.h"
#include "executor/mpi/mpi_comm.h"
#include "executor/mpi/process_groups.h"
#include "executor/train/host_names.h"
#include "executor/train/trainer.h"
#include "planner/rank_grid.h"
#include "planner/rank_placement.h"

namespace meshplan::cli {

namespace {

struct RunArgs {
  ProblemOptions problem;
  ConfigOptions config;
  PlanInputOptions plan;
  OutputOptions output;
  exec::TrainOptions train;
  std::string backend = "cpu";
  double memory_limit_gb = 0;
  double comm_timeout_s = 300;
  double min_lr = -1;  // default: max lr / 10
  int64_t bucket_mb = 4;
  bool force = false;           // start even when predicted not to fit the device
  bool no_selftest = false;     // skip the device selftest at start
  bool test_device_error = false;  // test hook: a DeviceError at the first step
  bool dtype_given = false;     // --dtype on the command line: the CPU emulates bf16 when it says bf16
  std::string cuda_attention = "cudnn";  // --cuda-attention cudnn|reference
  std::string cuda_gemm = "bf16-copy";   // --cuda-gemm bf16|bf16-copy|tf32|fp32
  double loss_chunk_mib = static_cast<double>(kDefaultLossChunkBytes) / (1 << 20);  // --loss-chunk-mib
  exec::CpuOptions cpu_options() const {
    exec::CpuOptions o;
    o.bf16_emulation = backend == "cpu" && dtype_given && problem.dtype == "bf16";
    return o;
  }
  exec::CudaOptions cuda_options() const {
    exec::CudaOptions o;
    o.attention = exec::parse_cuda_attention(cuda_attention).value_or(exec::CudaAttention::Cudnn);
    o.gemm = exec::parse_gemm_precision(cuda_gemm).value_or(exec::GemmPrecision::Bf16Copy);
    return o;
  }
};

// Where a user error points: the plan file, or the command line.
std::string error_source(const RunArgs& a) { return a.plan.plan.empty() ? "command line" : a.plan.plan; }

// The problem as this executor holds it: fp32 weights, grads, fp32 master, m, v = 20 bytes per
// parameter ("fp32-grads"); time at the peak FLOP/s of the GEMM dtype the backend really runs
// (cuda: bf16 in the default bf16-copy mode, tf32 with --cuda-gemm bf16 or tf32; cpu: fp32) when the profile
// lists it, memory with the activation dtype it stores;
// on the hardware of `prof` (CPU ranks: a CPU profile, never a GPU datasheet). Attention as the
// backend runs it: the CPU keeps the (B, nh, T, T) probabilities without recompute (materialized);
// the CUDA backend never keeps them (fused), at cuDNN's published speed when cuDNN's SDPA runs. Our
// fp32 reference kernels have no published speed: they are costed as cuDNN, and the report says so.
RunPrediction predict(const Setup& s, const exec::BackendPrecision& prec, const PredictionProfile& prof) {
  Problem p = s.problem;
  p.hardware = prof.hardware;
  // Like with like: the measured peak is the high-water mark of the executor's own tensors; the CUDA
  // context, cuBLAS workspace and NCCL buffers (the profile's other_memory) are outside it, and the
  // device fit check subtracts what is already in use before it compares.
  p.hardware.other_memory_bytes = 0;
  p.job.convention = ParamConvention::Fp32Grads;
  p.job.knobs.optimizer_states = OptimizerStates{};  // its AdamW keeps fp32 master, m and v whatever the plan says
  using Att = exec::BackendPrecision::Attention;
  p.job.knobs.attention = prec.attention == Att::Materialized ? AttentionKind::Materialized : AttentionKind::Fused;
  // The executor's own fp32 element-wise kernels (costmodel/executor_ops.h), with the bf16 copies
  // around cuDNN's attention where it runs.
  p.job.knobs.executor_ops = prec.attention == Att::Cudnn ? FrameworkKnobs::ExecutorOps::Fp32Bf16Attention
                                                       : FrameworkKnobs::ExecutorOps::Fp32;
  p.job.knobs.executor_gemm_copies = prec.gemm_operand_copies;  // bf16-copy GEMMs' operand copies
  p.job.knobs.executor_bf16_gemm_stash = prec.bf16_gemm_stash;   // h1, h2, act kept in bf16
  p.job.knobs.executor_bf16_attention_stash = prec.bf16_attention_stash;  // q, k, v, att too
  if (prec.attention != Att::Materialized) p.job.knobs.fused_kernel = FusedAttentionKernel::Cudnn;
  if (p.hardware.peak_flops_for(prec.gemm_dtype) > 0) p.job.dtype = prec.gemm_dtype;
  else if (p.hardware.peak_flops_for("fp32") > 0) p.job.dtype = "fp32";
  StepEstimate e = estimate_step(p, s.config);
  std::string dtype = p.job.dtype;
  if (prec.activation_dtype != p.job.dtype) {
    Problem m = p;
    m.job.dtype = prec.activation_dtype;
    e.memory = estimate_step(m, s.config).memory;
    dtype += " GEMMs, " + prec.activation_dtype + " activations";
  }
  if (prec.attention == Att::CudaFp32) dtype += "; attention costed at cuDNN's speed (the fp32 kernels ran)";
  return RunPrediction{e, to_string(p.job.convention), dtype, prec.description, prof.hardware.name,
                       prof.hardware.provenance.kind, prof.source, prof.path};
}

// mpirun's -np must be the plan's rank count.
Result<bool> check_world_size(const ParallelConfig& c, int world, const std::string& where) {
  const int ranks = c.tp * c.pp * c.dp * c.cp;
  if (world == ranks) return true;
  return make_error(where, "world size", std::to_string(world),
                    "the plan needs tp*pp*dp" + std::string(c.cp > 1 ? "*cp" : "") + " = " +
                        std::to_string(c.tp) + "*" + std::to_string(c.pp) + "*" + std::to_string(c.dp) +
                        (c.cp > 1 ? "*" + std::to_string(c.cp) : "") + " = " + std::to_string(ranks) + " ranks",
                    "launch with mpirun -np " + std::to_string(ranks));
}

// --memory-limit-gb against the predicted peak per rank (0: no limit).
Result<bool> check_memory_limit(const RunArgs& a, const RunPrediction& pred, const std::string& where) {
  const bool over = a.memory_limit_gb > 0 && pred.estimate.memory.peak_bytes > a.memory_limit_gb * 1e9;
  if (!over) return true;
  return make_error(where, "--memory-limit-gb", format_number(a.memory_limit_gb),
                    "the plan needs " + format_gb(pred.estimate.memory.peak_bytes) +
                        " per rank (cost model, fp32 executor)",
                    "raise the limit or pick a plan with more ZeRO/TP/PP or recompute");
}

// --steps and --resume.
Result<bool> check_training_flags(const RunArgs& a) {
  if (a.train.steps < 1)
    return make_error("command line", "--steps", std::to_string(a.train.steps), "must be at least 1");
  if (a.train.resume && a.train.checkpoint_dir.empty())
    return make_error("command line", "--resume", "", "needs --checkpoint-dir", "pass the directory of the run to resume");
  return true;
}

Result<bool> check_runnable(const RunArgs& a, const Setup& s, const RunPrediction& pred, int world) {
  const std::string where = error_source(a);
  ErrorList unsupported;
  check_executor_job(s.problem, where, unsupported);  // executor/job_support.h
  if (!unsupported.empty()) return unsupported.front();
  if (auto ok = check_world_size(s.config, world, where); !ok) return ok;
  if (auto ok = check_memory_limit(a, pred, where); !ok) return ok;
  return check_training_flags(a);
}

void print_report(const RunArgs& a, const Setup& s, const exec::TrainResult& r, const RunPrediction& pred,
                  int world, const std::vector<RankPlacement>& placements) {
  std::string text;
  if (a.output.format == "table") text = run_table(s.problem, s.config, r, pred, world);
  else if (a.output.format == "json") text = add_ranks_to_run_json(run_json(s.problem, s.config, r, pred, world), placements);
  else text = json_text_to_yaml(add_ranks_to_run_json(run_json(s.problem, s.config, r, pred, world), placements));
  if (auto e = emit(a.output, text); !e) report_error(e.error());
}

// An error every rank found alike: rank 0 prints it, the others exit with the same code quietly.
int fail_on_all(bool root, const Error& e) { return root ? report_error(e) : kExitBadInput; }

// The plan and its prediction on the hardware the ranks really are.
struct RunInputs {
  Setup setup;
  RunPrediction prediction;
};

// Output checks (before any training), the plan, whether this world can run it, and the prediction:
// on the plan's profile for the CUDA backend, on a CPU profile (collective) for CPU ranks.
Result<RunInputs> resolve_run(const RunArgs& a, exec::MpiRuntime& mpi) {
  if (auto f = check_format(a.output); !f) return f.error();
  if (auto w = check_writable(a.output.output); !w) return w.error();
  auto resolved = resolve_setup(a.problem, a.config, a.plan);
  if (!resolved) return resolved.error();
  if (!(a.loss_chunk_mib >= 0 && a.loss_chunk_mib <= 1048576))  // NaN fails too
    return make_error("command line", "--loss-chunk-mib", format_number(a.loss_chunk_mib),
                      "must be 0 or more, at most 1048576 (1 TiB)",
                      "0 keeps the whole logits; the default 256 splits larger ones");
  Setup s = std::move(resolved).value();
  // What this executor does with the loss: the trainer's chunk specs and the prediction read it.
  s.problem.job.knobs.loss_chunk_bytes = static_cast<uint64_t>(a.loss_chunk_mib * (1 << 20));
  const exec::BackendPrecision prec = exec::backend_precision(a.backend, a.cpu_options(), a.cuda_options());
  PredictionProfile prof{s.problem.hardware, "plan", ""};
  if (auto ok = check_runnable(a, s, predict(s, prec, prof), mpi.world_size()); !ok) return ok.error();
  if (a.backend == "cpu") {  // the CUDA backend runs on the GPUs the plan's profile describes
    auto cpu = cpu_prediction_profile(s.problem.hardware, mpi.world(), mpi.world_rank() == 0);
    if (!cpu) return cpu.error();
    prof = std::move(cpu).value();
  }
  return RunInputs{s, predict(s, prec, prof)};
}

// The rank grid and where every rank runs.
struct RankLayout {
  RankGrid grid;
  std::vector<RankPlacement> placements;
};

// Collective (host names are gathered); all ranks check the TP rule on the same list, so a refusal
// ends every rank at the same point.
Result<RankLayout> place_run(const RunArgs& a, const Setup& s, exec::MpiRuntime& mpi) {
  // CP ranks sit inside the grid's DP dimension (dp*cp of them, cp fastest: Megatron's tp-cp-dp-pp).
  auto grid = make_rank_grid(s.config.tp, s.config.dp * s.config.cp, s.config.pp, "tp-dp-pp");
  if (!grid) return grid.error();
  std::vector<RankPlacement> placements = place_ranks(*grid, exec::gather_host_names(mpi.world(), mpi.host()));
  if (auto tp_ok = check_tp_within_hosts(*grid, placements, s.problem.job.allow_tp_across_nodes, error_source(a));
      !tp_ok)
    return tp_ok.error();
  return RankLayout{std::move(grid).value(), std::move(placements)};
}

// Every rank checks its own device; all stop when one refuses (each refusing rank names its own).
// Returns kExitOk when every device fits the plan.
int check_fit_on_every_rank(const RunArgs& a, exec::Backend& backend, const RunPrediction& pred,
                            exec::MpiRuntime& mpi) {
  auto fits = check_fits_device(backend, pred.estimate.memory.peak_bytes, a.force, error_source(a));
  float refused = fits ? 0.0f : 1.0f;
  mpi.world().all_reduce(&refused, 1, exec::ReduceOp::Max);
  if (!fits) return report_error(fits.error());
  if (refused > 0) return kExitBadInput;
  return kExitOk;
}

// A backend that passed its device checks, or the exit code of the check that stopped the run.
struct ReadyBackend {
  std::unique_ptr<exec::Backend> backend;
  int exit_code = kExitOk;
};

// Device checks before any model allocation: the selftest (cli/selftest_gate.h), then the fit.
ReadyBackend ready_backend(const RunArgs& a, const RunPrediction& pred, exec::MpiRuntime& mpi) {
  auto made = exec::make_backend(a.backend, a.cpu_options(), a.cuda_options());  // every rank gets the same answer
  if (!made) return {nullptr, fail_on_all(mpi.world_rank() == 0, made.error())};
  std::unique_ptr<exec::Backend> backend = std::move(made).value();
  if (!a.no_selftest && !device_selftest_passes(*backend)) return {nullptr, end_on_failed_selftest(mpi.world_size())};
  if (const int code = check_fit_on_every_rank(a, *backend, pred, mpi); code != kExitOk) return {nullptr, code};
  return {std::move(backend), kExitOk};
}

// The CP and EP sub-groups, and the backend's own communicators for every group.
Result<bool> add_run_groups(exec::ProcessGroups& groups, const ParallelConfig& c, exec::Backend& backend,
                            exec::MpiRuntime& mpi) {
  exec::add_cp_group(mpi, groups, c.cp);
  exec::add_ep_groups(groups, c.ep);  // validated by the trainer: ep divides dp*cp
  return exec::use_device_communicators(groups, backend);
}

// The learning-rate schedule spans the run; --min-lr defaults to a tenth of the peak.
void set_schedule_options(RunArgs& a) {
  a.train.lr.total_steps = a.train.steps;
  a.train.lr.min_lr = a.min_lr >= 0 ? static_cast<float>(a.min_lr) : a.train.lr.max_lr / 10.0f;
  a.train.bucket_bytes = a.bucket_mb << 20;
}

// The step log. The host map opens it, once the run has really started: an input error found while
// training is set up (a bad data file, a missing checkpoint) stays the command's one line. JSON
// output carries the same map as `ranks`.
std::function<void(const exec::StepRecord&)> step_logger(const RunArgs& a, bool root, const RankLayout& layout) {
  const bool progress = root && (a.output.format == "table" || isatty(STDERR_FILENO));
  std::ostream* out = a.output.format == "table" && a.output.output.empty() ? &std::cout : &std::cerr;
  auto host_map_printed = std::make_shared<bool>(false);
  return [&a, &layout, root, progress, out, host_map_printed](const exec::StepRecord& rec) {
    if (a.test_device_error) throw exec::DeviceError("meshplan: rank ?: CUDA error at test hook: cudaMalloc(&p, bytes): out of memory (cudaErrorMemoryAllocation)");
    if (root && !*host_map_printed) {
      *out << host_map_table(layout.placements, layout.grid.order_string()) << std::flush;
      *host_map_printed = true;
    }
    if (progress) *out << step_line(rec, a.train.steps) << std::flush;
  };
}

int run_training_on(RunArgs& a, exec::MpiRuntime& mpi) {
  const bool root = mpi.world_rank() == 0;
  auto inputs = resolve_run(a, mpi);
  if (!inputs) return fail_on_all(root, inputs.error());
  const Setup& s = inputs->setup;
  auto layout = place_run(a, s, mpi);
  if (!layout) return fail_on_all(root, layout.error());
  ReadyBackend ready = ready_backend(a, inputs->prediction, mpi);
  if (!ready.backend) return ready.exit_code;
  exec::ProcessGroups groups = exec::make_process_groups(mpi, layout->grid);
  if (auto dev = add_run_groups(groups, s.config, *ready.backend, mpi); !dev) return fail_on_all(root, dev.error());
  set_schedule_options(a);
  a.train.on_step = step_logger(a, root, *layout);
  auto result = exec::train(s.problem, s.config, groups, *ready.backend, a.train, error_source(a));
  if (!result) return fail_on_all(root, result.error());
  if (root) print_report(a, s, *result, inputs->prediction, mpi.world_size(), layout->placements);
  return kExitOk;
}

int run_training(RunArgs& a) {
  exec::MpiRuntime mpi(a.comm_timeout_s);
  try {
    return run_training_on(a, mpi);
  } catch (const exec::DeviceError& e) {  // a failed CUDA/cuBLAS/NCCL call: one line, exit 1
    return end_on_device_error(e, mpi.world_size());
  }
}

void add_training_options(CLI::App* sub, RunArgs& a) {
  sub->add_option("--steps", a.train.steps, "Optimizer steps of the whole run (default 10)");
  allowed_values(sub->add_option("--backend", a.backend,
                                 "Executor backend: cpu (Eigen, fp32) or cuda (one GPU per rank) (default cpu)"),
                 {"cpu", "cuda"});
  sub->add_option("--data", a.train.data_path,
                  "Token data: .txt/.md (bytes, vocab 256), .bin/.u16 (uint16), .u32; default synthetic");
  sub->add_option("--checkpoint-dir", a.train.checkpoint_dir, "Write sharded checkpoints here");
  sub->add_option("--checkpoint-every", a.train.checkpoint_every, "Steps between checkpoints (default: last step only)");
  sub->add_flag("--resume", a.train.resume, "Continue from the latest complete checkpoint in --checkpoint-dir");
  sub->add_option("--memory-limit-gb", a.memory_limit_gb, "Refuse plans predicted to need more memory per rank, in GB = 1e9 bytes (default 0 = no limit)");
  sub->add_option("--seed", a.train.seed, "Seed of initialisation and synthetic data (default 1234)");
  sub->add_option("--lr", a.train.lr.max_lr, "Peak learning rate (default 3e-4)");
  sub->add_option("--min-lr", a.min_lr, "Final learning rate of the cosine decay (default lr/10)");
  sub->add_option("--warmup-steps", a.train.lr.warmup_steps, "Linear warmup steps (default 0)");
  sub->add_option("--max-grad-norm", a.train.max_grad_norm, "Global-norm clipping threshold (default 1; 0 = off)");
  sub->add_option("--weight-decay", a.train.adamw.weight_decay, "AdamW decoupled weight decay (default 0.1)");
  sub->add_option("--bucket-mb", a.bucket_mb, "DP all-reduce bucket size in MiB (default 4)");
  sub->add_option("--comm-timeout-s", a.comm_timeout_s,
                  "End the job when one communication call blocks longer (default 300; 0 = never)");
  sub->add_flag("--force", a.force, "Start even when the plan is predicted not to fit the device's memory");
  sub->add_flag("--no-selftest", a.no_selftest, "Skip the device selftest before training (--backend cuda)");
  allowed_values(sub->add_option("--cuda-attention", a.cuda_attention,
                                 "--backend cuda: attention by cuDNN's fused SDPA (bf16 q/k/v) or by the fp32 "
                                 "reference kernels (default cudnn; reference where the build has no cuDNN)"),
                 {"cudnn", "reference"})
      ->check(CLI::IsMember({"cudnn", "reference"}));
  allowed_values(sub->add_option("--cuda-gemm", a.cuda_gemm,
                                 "--backend cuda: GEMM math on the fp32 tensors: bf16-copy (bf16 copies of both operands, "
                                 "bf16 x bf16 tensor cores), bf16 (cuBLASLt rounds fp32 inputs: runs at TF32's rate), tf32 "
                                 "or fp32 (default bf16-copy)"),
                 {"bf16", "bf16-copy", "tf32", "fp32"})
      ->check(CLI::IsMember({"bf16", "bf16-copy", "tf32", "fp32"}));
  sub->add_option("--loss-chunk-mib", a.loss_chunk_mib,
                  "Largest chunk of fp32 logits the loss holds, MiB: bigger logits are computed in vocabulary "
                  "chunks and recomputed in the backward (one more LM-head GEMM) (default 256; 0 = whole)");
  sub->add_flag("--test-device-error", a.test_device_error)->group("");
  // Test hooks, not for users: the last rank SIGKILLs itself mid-step / mid-checkpoint-write.
  sub->add_option("--test-kill-at-step", a.train.test_kill_at_step)->group("");
  sub->add_option("--test-crash-in-checkpoint", a.train.test_crash_in_checkpoint)->group("");
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  args->train.steps = 10;
  CLI::App* sub = app.add_subcommand(
      "run", "Train a plan on MPI ranks (CPU or CUDA backend) and compare with the cost model's prediction");
  add_plan_input_options(sub, args->plan);
  add_problem_options(sub, args->problem);
  args->problem.allow_tp_flag_with_plan = true;  // run: --allow-tp-across-nodes also lifts the host rule
  add_config_options(sub, args->config);
  add_output_options(sub, args->output);
  add_training_options(sub, *args);
  sub->get_option("--gpus")->description(
      "Number of ranks = GPUs of the plan; must equal tp*pp*dp and the mpirun -np count (required unless --plan)");
  sub->footer(
      "Launch: mpirun -np <tp*pp*dp> meshplan run --plan plan.json (one rank runs without mpirun).\n"
      "As root add --allow-run-as-root (or OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1);\n"
      "with more ranks than cores add --oversubscribe. One rank per plan GPU: each rank is a process\n"
      "(CPU backend) or one GPU (--backend cuda). CPU ranks are predicted with a CPU profile: the plan's\n"
      "when it was calibrated, else this host's, measured once (quick sweeps) and cached under\n"
      "$XDG_CACHE_HOME/meshplan (default ~/.cache/meshplan).");
  sub->callback([args, sub, &exit_code] {
    args->dtype_given = sub->get_option("--dtype")->count() > 0;
    exit_code = run_training(*args);
  });
}

}  // namespace meshplan::cli
