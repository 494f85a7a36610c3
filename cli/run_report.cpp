// Text and JSON reports of a training run, with the cost model's prediction beside each measure.
#include "cli/run_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "cli/report.h"
#include "cli/report_json.h"
#include "core/loss_chunk.h"

namespace meshplan::cli {

namespace {

double relative_error(double predicted, double measured) {
  return measured != 0 ? (predicted - measured) / measured : 0.0;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string percent(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f %%", rel * 100.0);
  return buf;
}

std::string row(const std::string& name, const std::string& pred, const std::string& meas,
                const std::string& err) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "  %-34s %14s %14s %10s\n", name.c_str(), pred.c_str(), meas.c_str(),
                err.c_str());
  return buf;
}

// Exposed communication the cost model predicts (TP, PP transfers, DP) plus the pipeline bubble:
// the measured counterpart is time spent inside communication calls, which includes waiting for
// the neighbouring stage.
double predicted_comm_and_wait_s(const TimeBreakdown& t) {
  return t.tp_comm_s + t.pp_comm_s + t.dp_comm_s + t.pp_bubble_s;
}

}  // namespace

// Median over steps 2..n (the only step when there is one) of field(step).
template <class F>
double median_after_first(const exec::TrainResult& r, F field) {
  if (r.steps.empty()) return 0;
  if (r.steps.size() == 1) return field(r.steps[0]);
  std::vector<double> t;
  for (size_t i = 1; i < r.steps.size(); ++i) t.push_back(field(r.steps[i]));
  std::sort(t.begin(), t.end());
  const size_t m = t.size() / 2;
  return t.size() % 2 ? t[m] : 0.5 * (t[m - 1] + t[m]);
}

double measured_step_s(const exec::TrainResult& r) {
  return median_after_first(r, [](const exec::StepRecord& s) { return s.time_s; });
}

double measured_comm_s(const exec::TrainResult& r) {
  return median_after_first(r, [](const exec::StepRecord& s) { return s.comm_s; });
}

double measured_compute_s(const exec::TrainResult& r) {
  return median_after_first(r, [](const exec::StepRecord& s) { return s.time_s - s.comm_s; });
}

std::string step_line(const exec::StepRecord& s, int64_t total_steps) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "step %lld/%lld  loss %.6f  time %.4f s  %.0f tok/s  comm %.4f s  |g| %.4g  lr %.3g\n",
                static_cast<long long>(s.step + 1), static_cast<long long>(total_steps), s.loss,
                s.time_s, s.tokens_per_s, s.comm_s, s.grad_norm, s.lr);
  return buf;
}

namespace {
// The loss's vocabulary chunks on the last stage (core/loss_chunk.h): rows = tokens of a micro-batch
// on one CP rank, columns of this TP rank's vocabulary shard.
LossChunks loss_chunks(const Problem& p, const ParallelConfig& cfg) {
  const int64_t rows = std::max<int64_t>(1, cfg.micro_batch_size * p.job.seq_len / std::max(1, cfg.cp));
  return meshplan::loss_chunks(rows, std::max<int64_t>(1, p.model.vocab_size / cfg.tp), p.job.knobs.loss_chunk_bytes);
}
std::string loss_line(const Problem& p, const ParallelConfig& cfg) {
  const LossChunks c = loss_chunks(p, cfg);
  if (c.chunks == 1) return "loss: whole fp32 logits kept for the backward";
  return "loss: " + std::to_string(c.chunks) + " vocabulary chunks of " + std::to_string(c.columns) +
         " columns (--loss-chunk-mib), logits recomputed in the backward";
}
}  // namespace

std::string run_table(const Problem& p, const ParallelConfig& cfg, const exec::TrainResult& r,
                      const RunPrediction& pred, int world_size) {
  std::ostringstream out;
  const double step_s = measured_step_s(r);
  const TimeBreakdown& t = pred.estimate.time;
  const double comm_s = measured_comm_s(r);
  out << "\nrun: " << world_size << " ranks (tp " << cfg.tp << ", pp " << cfg.pp << ", dp " << cfg.dp
      << (cfg.cp > 1 ? ", cp " + std::to_string(cfg.cp) : std::string()) << ", zero " << cfg.zero_stage << ", schedule " << to_string(cfg.schedule) << ", v "
      << cfg.virtual_stages << ", micro-batches " << cfg.num_micro_batches << " x " << cfg.micro_batch_size
      << ", recompute " << to_string(cfg.recompute) << "), data: " << r.data_description << "\n";
  if (r.resumed_from_step >= 0) out << "resumed after step " << r.resumed_from_step << "\n";
  if (!pred.precision.empty()) out << "precision: " << pred.precision << "\n";
  out << loss_line(p, cfg) << "\n";
  out << "predicted with " << pred.profile << " (" << pred.profile_kind << ")";
  if (pred.profile_source == "plan") out << ", the plan's profile";
  else out << ", this host's profile " << (pred.profile_source == "measured" ? "measured now" : "measured before")
           << " and cached at " << pred.profile_path << " (the plan's " << p.hardware.name << " is a datasheet)";
  out << ", bytes/param convention " << pred.convention << ", dtype " << pred.dtype << "\n\n";
  out << row("quantity", "predicted", "measured", "error");
  out << row("step time (s)", fixed(t.step_s, 4), fixed(step_s, 4), percent(relative_error(t.step_s, step_s)));
  out << row("compute + optimizer (s)", fixed(t.compute_s + t.optimizer_s, 4), fixed(measured_compute_s(r), 4),
             percent(relative_error(t.compute_s + t.optimizer_s, measured_compute_s(r))));
  const double pc = predicted_comm_and_wait_s(t);
  out << row("communication + pipeline wait (s)", fixed(pc, 4), fixed(comm_s, 4), percent(relative_error(pc, comm_s)));
  const double tok = step_s > 0 ? static_cast<double>(r.tokens_per_step) / step_s : 0;
  out << row("tokens/s", fixed(pred.estimate.throughput.tokens_per_s, 0), fixed(tok, 0),
             percent(relative_error(pred.estimate.throughput.tokens_per_s, tok)));
  const double pm = pred.estimate.memory.peak_bytes, mm = static_cast<double>(r.peak_bytes);
  out << row("peak memory, worst rank (MB)", fixed(pm / 1e6, 2), fixed(mm / 1e6, 2), percent(relative_error(pm, mm)));
  out << row("  weights+grads+optimizer (MB)",
             fixed((pred.estimate.memory.weights_bytes + pred.estimate.memory.gradients_bytes +
                    pred.estimate.memory.optimizer_bytes) / 1e6, 2), "", "");
  out << row("  activations (MB)", fixed(pred.estimate.memory.activations_bytes / 1e6, 2), "", "");
  out << row("process RSS peak (MB)", "", fixed(static_cast<double>(r.peak_rss_bytes) / 1e6, 2), "");
  out << "\nmeasured: medians over steps 2..n; communication = time inside MPI calls (busiest rank,\n"
         "including waits for other stages), compute = step - communication; memory = high-water\n"
         "mark of the executor's tensors (max over ranks).\n";
  return out.str();
}

std::string run_json(const Problem& p, const ParallelConfig& cfg, const exec::TrainResult& r,
                     const RunPrediction& pred, int world_size) {
  ojson j;
  j["schema"] = "meshplan.run/1";
  j["precision"] = pred.precision;
  const LossChunks lc = loss_chunks(p, cfg);
  j["loss_chunks"] = {{"budget_bytes", p.job.knobs.loss_chunk_bytes}, {"columns", lc.columns}, {"chunks", lc.chunks}};
  ojson steps = ojson::array();
  for (const exec::StepRecord& s : r.steps) {
    steps.push_back({{"step", s.step}, {"loss", s.loss}, {"time_s", s.time_s},
                     {"tokens_per_s", s.tokens_per_s}, {"grad_norm", s.grad_norm}, {"lr", s.lr},
                     {"comm_s", s.comm_s}});
  }
  j["steps"] = steps;
  const double step_s = measured_step_s(r);
  j["measured"] = {{"step_s", step_s},
                   {"peak_bytes", r.peak_bytes},
                   {"stage_peak_bytes", r.stage_peak_bytes},
                   {"rss_peak_bytes", r.peak_rss_bytes},
                   {"comm_s", measured_comm_s(r)},
                   {"compute_s", measured_compute_s(r)},
                   {"tokens_per_s", step_s > 0 ? static_cast<double>(r.tokens_per_step) / step_s : 0.0}};
  const StepEstimate& e = pred.estimate;
  j["predicted"] = {{"step_s", report_number(e.time.step_s)},
                    {"peak_bytes", report_bytes(e.memory.peak_bytes)},
                    {"compute_s", report_number(e.time.compute_s)},
                    {"optimizer_s", report_number(e.time.optimizer_s)},
                    {"comm_and_wait_s", report_number(predicted_comm_and_wait_s(e.time))},
                    {"activations_bytes", report_bytes(e.memory.activations_bytes)},
                    {"tokens_per_s", report_number(e.throughput.tokens_per_s)},
                    {"bytes_per_param", pred.convention},
                    {"dtype", pred.dtype},
                    {"profile", pred.profile},
                    {"profile_kind", pred.profile_kind},
                    {"profile_source", pred.profile_source},
                    {"profile_path", pred.profile_path}};
  j["error"] = {{"step_s", report_number(relative_error(e.time.step_s, step_s))},
                {"peak_bytes", report_number(relative_error(e.memory.peak_bytes, static_cast<double>(r.peak_bytes)))}};
  j["config"] = config_object(cfg);
  j["world_size"] = world_size;
  j["data"] = r.data_description;
  j["resumed_from_step"] = r.resumed_from_step;
  j["checkpoints"] = r.checkpoints_written;
  j["provenance"] = provenance_object(p);
  return j.dump(2) + "\n";
}

}  // namespace meshplan::cli
