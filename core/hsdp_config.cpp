// HSDP rules (core/hsdp_config.h).
#include "core/hsdp_config.h"

namespace meshplan {

bool hsdp_enabled(const ParallelConfig& cfg) { return cfg.shard_group > 0 && cfg.shard_group < cfg.dp; }

ErrorList validate_hsdp_config(const ParallelConfig& c, const std::string& w) {
  ErrorList e;
  if (c.shard_group == 0) return e;
  const char* flag = "--shard-group";
  const std::string value = std::to_string(c.shard_group);
  if (c.shard_group < 0) {
    e.push_back(make_error(w, flag, value, "must be >= 0", "0 shards over all DP ranks; N shards within groups of N"));
    return e;
  }
  if (c.dp % c.shard_group != 0)
    e.push_back(make_error(w, flag, value, "does not divide dp=" + std::to_string(c.dp),
                           "use a divisor of dp, e.g. the DP ranks of one node"));
  if (c.shard_group == c.dp) return e;  // plain sharding over the whole DP group
  if (c.zero_stage < 1)
    e.push_back(make_error(w, flag, value, "shards ZeRO state, but zero=0 shards nothing",
                           "use --zero 3 (FSDP HYBRID_SHARD), 2 (_HYBRID_SHARD_ZERO2) or 1 (Megatron's partial "
                           "distributed optimizer), or drop --shard-group"));
  if (c.ep > 1)
    e.push_back(make_error(w, flag, value, "is not costed with expert parallelism (ep=" + std::to_string(c.ep) + ")",
                           "use --ep 1, or drop --shard-group"));
  return e;
}

}  // namespace meshplan
