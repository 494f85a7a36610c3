// agree(): a max-reduction picks the lowest failing rank, which broadcasts its Error's fields.
#include "executor/train/rank_agreement.h"

#include <cstdint>
#include <string>
#include <vector>

namespace meshplan::exec {

static void broadcast_string(Communicator& world, std::string& s, int root) {
  float length = static_cast<float>(s.size());
  world.broadcast(&length, 1, root);
  s.resize(static_cast<size_t>(length));
  if (!s.empty()) world.broadcast_bytes(&s[0], s.size(), root);
}

Result<bool> agree(Communicator& world, const Result<bool>& mine) {
  // Failing rank r contributes size - r (> 0): the maximum names the lowest failing rank.
  float flag = mine.ok() ? 0.0f : static_cast<float>(world.size() - world.rank());
  world.all_reduce(&flag, 1, ReduceOp::Max);
  if (flag == 0.0f) return true;
  const int root = world.size() - static_cast<int>(flag);
  Error e = mine.ok() ? Error{} : mine.error();
  for (std::string* field : {&e.file, &e.field, &e.value, &e.message, &e.hint})
    broadcast_string(world, *field, root);
  return e;
}

double all_reduce_sum_double(Communicator& group, double value) {
  // Three floats hold a double's 53 mantissa bits (24 + 24 + 24); the sum is then taken in double
  // in rank order, identically on every rank.
  float parts[3];
  double rest = value;
  for (float& p : parts) {
    p = static_cast<float>(rest);
    rest -= static_cast<double>(p);
  }
  std::vector<float> all(3 * static_cast<size_t>(group.size()));
  group.all_gather(parts, all.data(), 3);
  double sum = 0;
  for (int r = 0; r < group.size(); ++r)
    sum += static_cast<double>(all[3 * r]) + static_cast<double>(all[3 * r + 1]) + static_cast<double>(all[3 * r + 2]);
  return sum;
}

std::vector<uint64_t> all_gather_u64(Communicator& group, uint64_t value) {
  const float mine[2] = {static_cast<float>(value >> 24), static_cast<float>(value & 0xFFFFFF)};
  std::vector<float> all(2 * static_cast<size_t>(group.size()));
  group.all_gather(mine, all.data(), 2);
  std::vector<uint64_t> out(static_cast<size_t>(group.size()));
  for (int r = 0; r < group.size(); ++r)
    out[r] = (static_cast<uint64_t>(all[2 * r]) << 24) | static_cast<uint64_t>(all[2 * r + 1]);
  return out;
}

uint64_t all_reduce_max_u64(Communicator& group, uint64_t value) {
  uint64_t best = 0;
  for (uint64_t v : all_gather_u64(group, value)) best = v > best ? v : best;
  return best;
}

}  // namespace meshplan::exec
