// Regimes of the validation data and the accuracy note printed by plan and estimate.
#include "costmodel/regime.h"

#include <cmath>
#include <cstdio>

namespace meshplan {

Regime regime_of(const ParallelConfig& cfg, bool moe_model) {
  Regime r;
  r.moe = moe_model;
  r.zero3 = cfg.zero_stage >= 3;
  r.dp_band = cfg.dp <= 1 ? 0 : cfg.dp <= 64 ? 1 : cfg.dp <= 512 ? 2 : 3;
  return r;
}

std::string describe(const Regime& r) {
  static const char* bands[] = {"DP 1", "DP 2-64", "DP 65-512", "DP > 512"};
  return std::string(r.moe ? "MoE models, " : "") + (r.zero3 ? "ZeRO-3" : "ZeRO 0-2") + " at " + bands[r.dp_band];
}

namespace {
template <typename Match>
RegimeAccuracy accuracy_where(const std::vector<RunPrediction>& runs, const std::vector<Regime>& regimes, Match match) {
  RegimeAccuracy a;
  double abs_sum = 0.0, sum = 0.0;
  for (size_t i = 0; i < runs.size() && i < regimes.size(); ++i) {
    if (!runs[i].held_out() || !runs[i].skipped.empty() || !match(regimes[i])) continue;
    ++a.runs;
    abs_sum += std::fabs(runs[i].error);
    sum += runs[i].error;
  }
  if (a.runs > 0) {
    a.mean_abs_error = abs_sum / a.runs;
    a.mean_error = sum / a.runs;
  }
  return a;
}
}  // namespace

RegimeAccuracy regime_accuracy(const std::vector<RunPrediction>& runs, const std::vector<Regime>& regimes,
                               const Regime& r) {
  return accuracy_where(runs, regimes, [&](const Regime& x) { return x == r; });
}

RegimeAccuracy model_class_accuracy(const std::vector<RunPrediction>& runs, const std::vector<Regime>& regimes,
                                    bool moe) {
  return accuracy_where(runs, regimes, [&](const Regime& x) { return x.moe == moe; });
}

RegimeAccuracy held_out_accuracy(const std::vector<RunPrediction>& runs) {
  return accuracy_where(runs, std::vector<Regime>(runs.size()), [](const Regime&) { return true; });
}

std::string regime_note(const Regime& r, const RegimeAccuracy& a) { return regime_note(describe(r), a); }

std::string regime_note(const std::string& description, const RegimeAccuracy& a) {
  if (a.runs < kWeakRegimeMinRuns || a.mean_abs_error <= kWeakRegimeMeanError) return "";
  // The numbers formatted apart, the description appended whole: no length limit on it.
  char numbers[512];
  std::snprintf(numbers, sizeof numbers,
                ": on %d published held-out runs there (validation/) its step times erred by %.1f%% on average "
                "(mean signed error %+.1f%%, %s); treat this estimate as uncertain by that much",
                a.runs, 100.0 * a.mean_abs_error, 100.0 * a.mean_error, a.mean_error < 0 ? "too fast" : "too slow");
  return "note: the model is weak for " + description + numbers;
}

std::string routing_note(const RegimeAccuracy& natural, const RegimeAccuracy& forced) {
  if (natural.runs < kWeakRegimeMinRuns || natural.mean_abs_error <= kWeakRegimeMeanError) return "";
  char text[640];
  std::snprintf(text, sizeof text,
                "note: expert loads are costed balanced (no --moe-imbalance); on %d published held-out runs trained "
                "with natural (unforced) routing the step times erred by %.1f%% on average (mean signed error "
                "%+.1f%%, %s), against %.1f%% on %d with forced balancing: with natural routing, measure the busiest "
                "expert's tokens over the mean and pass it as --moe-imbalance",
                natural.runs, 100.0 * natural.mean_abs_error, 100.0 * natural.mean_error,
                natural.mean_error < 0 ? "too fast" : "too slow", 100.0 * forced.mean_abs_error, forced.runs);
  return text;
}

}  // namespace meshplan
