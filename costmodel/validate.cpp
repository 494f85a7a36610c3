// Predictions of published runs and their error statistics (`meshplan validate`).
#include "costmodel/validate.h"

#include <algorithm>
#include <cmath>

#include "costmodel/flops.h"

namespace meshplan {

Problem run_problem(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw) {
  Problem p;
  const ModelSpec* m = set.find_model(run.model);
  assert(m != nullptr);  // parse_validation checked it
  p.model = *m;
  p.hardware = hw;
  p.job.gpus = run.gpus;
  p.job.global_batch = run.global_batch;
  p.job.seq_len = run.seq_len;
  p.job.dtype = set.dtype;
  p.job.convention = set.convention;
  return p;
}

ParallelConfig run_config(const ValidationRun& run) {
  ParallelConfig c;
  c.tp = run.tp;
  c.pp = run.pp;
  c.dp = run.dp;
  c.zero_stage = run.zero_stage;
  c.micro_batch_size = run.micro_batch;
  c.num_micro_batches = run.dp > 0 && run.micro_batch > 0 ? run.global_batch / (run.dp * run.micro_batch) : 0;
  c.recompute = run.recompute;
  c.sequence_parallel = run.sequence_parallel;
  c.dp_overlap = run.dp_overlap;
  c.schedule = run.schedule;
  c.virtual_stages = run.virtual_stages;
  return c;
}

// Narayanan et al. 2021, eq. 3: FLOPs per iteration with full recomputation counted.
static double megatron_formula_flops(const ModelSpec& m, double B, double s) {
  const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size);
  const double V = static_cast<double>(m.vocab_size);
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double published_iteration_s(const ValidationSet& set, const ValidationRun& run) {
  if (run.iteration_s > 0) return run.iteration_s;
  const ModelSpec& m = *set.find_model(run.model);
  const double B = static_cast<double>(run.global_batch), s = static_cast<double>(run.seq_len);
  const double flops = set.flops_formula == "megatron" ? megatron_formula_flops(m, B, s)
                                                       : step_flops(m, B, s, Recompute::None).model;
  return flops / (run.tflops_per_gpu * 1e12 * static_cast<double>(run.gpus));
}

Result<RunPrediction> predict_run(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw) {
  const Problem p = run_problem(set, run, hw);
  const ParallelConfig c = run_config(run);
  const ErrorList errors = validate_config(p, c, set.file + ": " + run.label);
  if (!errors.empty()) return errors.front();
  RunPrediction out;
  out.set = set.name;
  out.label = run.label;
  out.derived = run.iteration_s <= 0;
  out.published_s = published_iteration_s(set, run);
  out.estimate = estimate_step(p, c);
  out.predicted_s = out.estimate.time.step_s;
  out.error = (out.predicted_s - out.published_s) / out.published_s;
  return out;
}

void summarize(ValidationReport& report) {
  double sum = 0.0, worst = 0.0;
  for (const auto& r : report.runs) {
    sum += std::fabs(r.error);
    worst = std::max(worst, std::fabs(r.error));
  }
  report.mean_abs_error = report.runs.empty() ? 0.0 : sum / report.runs.size();
  report.max_abs_error = worst;
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
