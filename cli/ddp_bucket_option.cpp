// --ddp-bucket-size and its plan-file key (cli/ddp_bucket_option.h).
#include "cli/ddp_bucket_option.h"

#include <CLI/CLI.hpp>

#include "core/framework.h"

namespace meshplan::cli {

namespace {
constexpr const char* kCmd = "command line";
constexpr const char* kFlag = "--ddp-bucket-size";
constexpr const char* kKey = "ddp_bucket_size";
constexpr int64_t kMaxParams = int64_t{1} << 50;  // far above any model; keeps the double exact

// Empty when `params` can be the job's bucket size, else why not (the hint is the caller's).
std::string rule(int64_t params, const Job& job) {
  if (params < 0 || params > kMaxParams) return "must be a parameter count >= 0";
  if (params > 0 && !runs_megatron_core_option(job.framework))
    return std::string("is Megatron-Core's DDP bucket size; framework ") + to_string(job.framework) + " does not run it";
  return "";
}
}  // namespace

void add_ddp_bucket_option(CLI::App* sub, int64_t& params) {
  sub->add_option(kFlag, params,
                  "Megatron-Core's DDP bucket size (DistributedDataParallelConfig.bucket_size), in parameters: the "
                  "bucket group holding the input embedding is reduced after the last backward and gathered "
                  "before the first forward with no compute to hide behind; needs --framework megatron or nemo "
                  "(default 0: Megatron-Core's max(40000000, 1000000 x dp); Megatron-Bridge sets 134217728)");
}

Result<bool> apply_ddp_bucket_option(int64_t params, CLI::App* app, Job& job) {
  if (!app || app->count(kFlag) == 0) return true;
  if (const std::string why = rule(params, job); !why.empty())
    return make_error(kCmd, kFlag, std::to_string(params), why,
                      params < 0 ? "e.g. 134217728, or 0 for Megatron-Core's default"
                                 : "add --framework megatron or nemo, or drop --ddp-bucket-size");
  job.knobs.ddp_bucket_params = static_cast<double>(params);
  return true;
}

void add_ddp_bucket_json(ojson& j, const Job& job) {
  if (job.knobs.ddp_bucket_params > 0) j[kKey] = static_cast<int64_t>(job.knobs.ddp_bucket_params);
}

Result<bool> read_ddp_bucket_json(const ojson& j, const std::string& file, const std::string& at, Job& job) {
  if (!j.is_object() || !j.contains(kKey)) return true;
  const ojson& v = j[kKey];
  const std::string where = at + "." + kKey;
  if (!v.is_number_integer()) return make_error(file, where, v.dump(), "must be a parameter count >= 0", "e.g. 134217728");
  if (const std::string why = rule(v.get<int64_t>(), job); !why.empty())
    return make_error(file, where, v.dump(), why, "framework megatron or nemo, or drop the key");
  job.knobs.ddp_bucket_params = static_cast<double>(v.get<int64_t>());
  return true;
}

}  // namespace meshplan::cli
