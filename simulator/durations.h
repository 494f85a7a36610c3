// From the cost model's StepCosts and the user's what-ifs (ideal network, slow ranks/links) to a
// SimInput of integer-nanosecond durations.
#pragma once
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"
#include "costmodel/estimate.h"
#include "simulator/sim_types.h"

namespace meshplan {

struct SimOptions {
  bool ideal_network = false;                     // every transfer free: p2p, DP, ZeRO and TP comm
  std::vector<std::pair<int, double>> slow_ranks;  // pipeline rank of DP replica 0 -> compute factor
  std::vector<std::pair<int, double>> slow_links;  // link rank r <-> r+1 (mod pp) of replica 0 -> factor
  bool record_spans = true;
};

/// Replicas to simulate: 1 when every DP replica behaves alike, 2 (the slowed one and one standing
/// for the dp-1 normal ones) when a slow rank or link breaks the symmetry and dp > 1.
int replicas_needed(const ParallelConfig& cfg, const SimOptions& o);
/// MoE: how many of the `replicas` simulated DP replicas share one expert-parallel group (their
/// lanes of a rank join at every expert all-to-all); 1 for dense models or EP inside one replica.
int ep_group_replicas(const ParallelConfig& cfg, int replicas);

/// Checks the what-ifs (rank in range, factor > 0). Errors name --slow-rank / --slow-link.
Result<bool> check_sim_options(const ParallelConfig& cfg, const SimOptions& o);

/// Durations per model chunk (B without W includes the weight gradients; TP comm inside layers;
/// ZeRO-3 gathers per layer, twice in B for the layers DeepSpeed re-fetches), p2p, optimizer,
/// ZeRO-1/2 weight all-gather after the optimizer, slowdown factors. Assumes check_sim_options.
SimInput make_sim_input(const Problem& p, const ParallelConfig& cfg, const Schedule& s,
                        const StepCosts& costs, const SimOptions& o);

/// Uniform synthetic costs for checking a schedule against closed forms: every chunk forward
/// `forward_ns`, backward `backward_ns` (split evenly into B and W when the schedule has W),
/// no communication, no DP.
SimInput uniform_sim_input(const Schedule& s, Nanoseconds forward_ns, Nanoseconds backward_ns);

}  // namespace meshplan
