// Validation regimes and the weak-regime note of plan/estimate (costmodel/regime.h).
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/io.h"
#include "costmodel/regime.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ParallelConfig cfg(int dp, int zero) {
  ParallelConfig c;
  c.dp = dp;
  c.zero_stage = zero;
  return c;
}
Regime regime_of_dense(const ParallelConfig& c) { return regime_of(c, false); }
RunPrediction run(double error, bool tuning = false) {
  RunPrediction r;
  r.error = error;
  r.tuning = tuning;
  return r;
}
}  // namespace

TEST_CASE("regimes: ZeRO-3 or not, DP bands 1 / 2-64 / 65-512 / > 512") {
  CHECK(regime_of_dense(cfg(1, 0)).dp_band == 0);
  CHECK(regime_of_dense(cfg(64, 1)).dp_band == 1);
  CHECK(regime_of_dense(cfg(65, 3)).dp_band == 2);
  CHECK(regime_of_dense(cfg(513, 3)).dp_band == 3);
  CHECK(regime_of_dense(cfg(8, 3)).zero3);
  CHECK_FALSE(regime_of_dense(cfg(8, 2)).zero3);
  CHECK(describe(regime_of_dense(cfg(128, 3))) == "ZeRO-3 at DP 65-512");
}

TEST_CASE("the note appears only for a weak regime, with the held-out runs' own error") {
  const std::vector<RunPrediction> runs = {run(-0.30), run(-0.20), run(-0.10), run(0.5, true), run(0.01)};
  std::vector<Regime> configs;
  for (const ParallelConfig& c : {cfg(128, 3), cfg(256, 3), cfg(100, 3), cfg(128, 3), cfg(8, 0)})
    configs.push_back(regime_of_dense(c));
  const RegimeAccuracy a = regime_accuracy(runs, configs, regime_of_dense(cfg(200, 3)));
  CHECK(a.runs == 3);  // the tuning run is not counted
  CHECK(a.mean_abs_error == Approx(0.2));
  CHECK(a.mean_error == Approx(-0.2));
  const std::string note = regime_note(regime_of_dense(cfg(200, 3)), a);
  CHECK(note.find("ZeRO-3 at DP 65-512") != std::string::npos);
  CHECK(note.find("20.0%") != std::string::npos);
  CHECK(note.find("too fast") != std::string::npos);
  CHECK(note.find('\n') == std::string::npos);  // one line
  // Too few runs, or accurate enough: no note.
  const RegimeAccuracy few = regime_accuracy(runs, configs, regime_of_dense(cfg(8, 0)));
  CHECK(few.runs == 1);
  CHECK(regime_note(regime_of_dense(cfg(8, 0)), few).empty());
  RegimeAccuracy good;
  good.runs = 10;
  good.mean_abs_error = 0.05;
  CHECK(regime_note(regime_of_dense(cfg(8, 0)), good).empty());
}

TEST_CASE("regimes: MoE and dense models of one layout are apart and the note names the MoE class") {
  const Regime moe = regime_of(cfg(64, 1), true), dense = regime_of(cfg(64, 1), false);
  CHECK_FALSE(moe == dense);
  CHECK(describe(moe) == "MoE models, ZeRO 0-2 at DP 2-64");
  CHECK(describe(dense) == "ZeRO 0-2 at DP 2-64");
  const std::vector<RunPrediction> runs = {run(-0.30), run(-0.20), run(-0.40), run(0.01), run(-0.02), run(0.03)};
  const std::vector<Regime> regimes = {moe, moe, moe, dense, dense, dense};
  const RegimeAccuracy m = regime_accuracy(runs, regimes, moe), d = regime_accuracy(runs, regimes, dense);
  CHECK(m.runs == 3);
  CHECK(m.mean_abs_error == Approx(0.3));
  CHECK(d.mean_abs_error == Approx(0.02));
  CHECK(regime_note(moe, m).find("MoE models, ZeRO 0-2 at DP 2-64") != std::string::npos);
  CHECK(regime_note(dense, d).empty());
}

TEST_CASE("held-out accuracy of a set of runs leaves out tuning and regression and skipped runs") {
  auto run = [](double error, bool tuning, const std::string& regression, const std::string& skipped) {
    RunPrediction r;
    r.error = error;
    r.tuning = tuning;
    r.regression = regression;
    r.skipped = skipped;
    return r;
  };
  const std::vector<RunPrediction> runs = {run(-0.20, false, "", ""), run(0.10, false, "", ""),
                                           run(-0.90, true, "", ""), run(-0.90, false, "publisher: slower", ""),
                                           run(-0.90, false, "", "not predicted")};
  const RegimeAccuracy a = held_out_accuracy(runs);
  CHECK(a.runs == 2);
  CHECK(a.mean_abs_error == Approx(0.15));
  CHECK(a.mean_error == Approx(-0.05));
  CHECK(regime_note("runs on some-gpu", a).empty());  // 2 runs: too few to judge
  const RegimeAccuracy three = held_out_accuracy({run(-0.2, false, "", ""), run(-0.1, false, "", ""), run(0.0, false, "", "")});
  CHECK(regime_note("runs on some-gpu", three).find("note: the model is weak for runs on some-gpu: on 3 published") == 0);
}
