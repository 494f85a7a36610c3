// Validation regimes: which published runs resemble a configuration, and how well we predicted them.
#pragma once
#include <string>
#include <vector>

#include "core/parallel_config.h"
#include "costmodel/validate.h"

namespace meshplan {

/// A regime is (model class, ZeRO class, DP band): mixture-of-experts or dense models (MoE runs err
/// about twice as much as dense ones: the issues' separate targets, costmodel/README.md "Validation"),
/// "zero3" (ZeRO-3/FSDP full sharding, whose collectives grow with every layer and micro-batch) or
/// "zero0-2"; DP bands 1, 2-64, 65-512 and > 512 GPUs (within a node or a few, tens of nodes, hundreds
/// of nodes). Simple on purpose: these are the axes along which our errors change most.
struct Regime {
  bool moe = false;
  bool zero3 = false;
  int dp_band = 0;  // 0: dp 1; 1: 2-64; 2: 65-512; 3: > 512
  bool operator==(const Regime& o) const { return moe == o.moe && zero3 == o.zero3 && dp_band == o.dp_band; }
};

/// `moe_model`: the job's model has routed experts (ModelSpec::moe.enabled()).
Regime regime_of(const ParallelConfig& cfg, bool moe_model);
std::string describe(const Regime& r);  // e.g. "ZeRO-3 at DP 65-512", "MoE models, ZeRO 0-2 at DP 2-64"

/// Error statistics of the held-out runs in one regime.
struct RegimeAccuracy {
  int runs = 0;
  double mean_abs_error = 0;
  double mean_error = 0;  // signed: < 0 = predicted too fast on average
};

/// `regimes[i]` is runs[i]'s regime (regime_of its layout and model).
RegimeAccuracy regime_accuracy(const std::vector<RunPrediction>& runs, const std::vector<Regime>& regimes,
                               const Regime& r);

/// A regime is weak when at least kWeakRegimeMinRuns held-out runs fall in it and their mean |error|
/// exceeds kWeakRegimeMeanError (issue 10's held-out target, 8 %).
constexpr int kWeakRegimeMinRuns = 3;
constexpr double kWeakRegimeMeanError = 0.08;

/// The one-line note for `plan`/`estimate`, or "" when the regime is not weak.
std::string regime_note(const Regime& r, const RegimeAccuracy& a);

/// The same note for runs described by `description` (e.g. all MoE runs, where a MoE plan's own
/// regime holds fewer than kWeakRegimeMinRuns of them).
std::string regime_note(const std::string& description, const RegimeAccuracy& a);

/// The routing note of a MoE job costed with balanced expert loads (core/moe_load.h moe_load_balanced): how the
/// held-out runs whose source states natural (unforced) routing were predicted, against those with forced
/// balancing, or "" when the natural-routing runs are fewer than kWeakRegimeMinRuns or not weak.
std::string routing_note(const RegimeAccuracy& natural, const RegimeAccuracy& forced);

/// Held-out accuracy of all of `runs`, whatever their layout and model (e.g. the runs of one profile).
RegimeAccuracy held_out_accuracy(const std::vector<RunPrediction>& runs);

/// Held-out accuracy of every run of the model class (MoE or dense), whatever its layout.
RegimeAccuracy model_class_accuracy(const std::vector<RunPrediction>& runs, const std::vector<Regime>& regimes,
                                    bool moe);

}  // namespace meshplan
