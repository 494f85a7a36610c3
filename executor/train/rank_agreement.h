// Agreement on failures across ranks: when any rank hits a user error (say, its checkpoint shard
// is corrupted), every rank must stop at the same point with the same message, or the others
// would wait forever in the next collective.
#pragma once
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "executor/comm.h"

namespace meshplan::exec {

/// Collective over `world`. Returns ok when every rank passed ok; otherwise every rank returns the
/// Error of the lowest failing rank (its fields sent to all), so rank 0 can print it.
Result<bool> agree(Communicator& world, const Result<bool>& mine);

/// Sum of one double over the group in double precision (each value carried as three floats
/// through an fp32 all-gather, summed in rank order: every rank gets the same bits).
double all_reduce_sum_double(Communicator& group, double value);
/// Every rank's value (exact below 2^48: two 24-bit halves per value), indexed by group rank.
std::vector<uint64_t> all_gather_u64(Communicator& group, uint64_t value);
/// Maximum of one non-negative integer below 2^48 over the group (exact: two 24-bit halves).
uint64_t all_reduce_max_u64(Communicator& group, uint64_t value);

}  // namespace meshplan::exec
