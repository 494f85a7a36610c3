// gather_host_names: one fixed-size byte broadcast per rank (no float reinterpretation of text).
#include "executor/train/host_names.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace meshplan::exec {

std::vector<std::string> gather_host_names(Communicator& group, const std::string& mine) {
  constexpr size_t kBytes = 256;  // HOST_NAME_MAX (255) + terminating zero
  std::vector<std::string> hosts;
  for (int root = 0; root < group.size(); ++root) {
    std::array<char, kBytes> buf{};
    if (group.rank() == root) std::memcpy(buf.data(), mine.data(), std::min(mine.size(), kBytes - 1));
    group.broadcast_bytes(buf.data(), kBytes, root);
    hosts.emplace_back(buf.data());
  }
  return hosts;
}

}  // namespace meshplan::exec
