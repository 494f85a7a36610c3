// Host names of every rank of a group, so rank 0 can print where each rank runs and check that
// the placement keeps each TP group on one host.
#pragma once
#include <string>
#include <vector>

#include "executor/comm.h"

namespace meshplan::exec {

/// Collective over `group`: every member passes its own host name and receives all of them,
/// indexed by group rank. Names longer than 255 bytes are cut (POSIX HOST_NAME_MAX is 255).
std::vector<std::string> gather_host_names(Communicator& group, const std::string& mine);

}  // namespace meshplan::exec
