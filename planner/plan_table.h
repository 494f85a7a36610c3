// Human-readable reports of a search: the ranked table with memory and time breakdowns, the
// Pareto list, and the number formatting they share. Plain text, deterministic (no timings).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel_config.h"
#include "planner/search.h"

namespace meshplan {

/// "tp=8 pp=4 dp=4 zero=1 mb=1 M=256 interleaved v=2 recompute=selective sp=on overlap=on".
std::string describe_config(const ParallelConfig& c);
/// ZeRO stage, with "/N" under HSDP (shard group of N DP ranks): "3", "3/8".
std::string zero_text(const ParallelConfig& c);
/// Schedule column text: "1f1b", "interleaved v=2", "-" when pp == 1; an uneven chunk split follows in
/// run-length form, "1f1b [4x15,1]" (planner/pipeline_balance.h).
std::string schedule_text(const ParallelConfig& c);
/// Layers per chunk in run-length form: "4x15,1" for 15 chunks of 4 layers and one of 1.
std::string layers_text(const std::vector<int>& chunks);

/// 466608 -> "466,608".
std::string group_thousands(int64_t n);
/// Bytes as GB (1e9) with two decimals: "70.12".
std::string gb_text(double bytes);
/// Seconds with 4 significant digits in fixed notation: "58.96", "0.1234".
std::string seconds_text(double s);

/// Header (problem, objective, counts), the top-K table, the breakdown table, and the Pareto list
/// when the search collected one.
std::string plan_table(const Problem& p, const SearchOptions& opt, const SearchResult& r);
/// The Pareto front alone: memory ascending with step time and throughput.
std::string pareto_table(const Problem& p, const SearchResult& r);

}  // namespace meshplan
