// CLI flag and plan-file key of Megatron-Core's DDP bucket size (--ddp-bucket-size,
// costmodel/ddp_edge_bucket.h).
#pragma once
#include <cstdint>
#include <string>

#include "cli/report_json.h"
#include "core/error.h"
#include "core/parallel_config.h"

namespace CLI {
class App;
}

namespace meshplan::cli {

/// Adds --ddp-bucket-size bound to `params` (parameters per bucket; 0 = Megatron-Core's default).
void add_ddp_bucket_option(CLI::App* sub, int64_t& params);
/// The flag, when given on `app`, into the job (megatron and nemo only); one Error naming the flag otherwise.
Result<bool> apply_ddp_bucket_option(int64_t params, CLI::App* app, Job& job);
/// "ddp_bucket_size" when set.
void add_ddp_bucket_json(ojson& job_json, const Job& job);
/// Reads it back from a plan file's job object; a bad value as an Error naming `at`.ddp_bucket_size.
Result<bool> read_ddp_bucket_json(const ojson& j, const std::string& file, const std::string& at, Job& job);

}  // namespace meshplan::cli
