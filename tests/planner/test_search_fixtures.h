// Problems for the planner tests, built from the shipped model files and hardware profiles.
#pragma once
#include <catch2/catch.hpp>

#include <string>

#include "core/framework.h"
#include "core/io.h"
#include "core/parallel_config.h"

namespace planner_test {

/// examples/models/<model>.yaml (or .json) on hardware-profiles/<hardware>.yaml.
inline meshplan::Problem problem(const std::string& model, const std::string& hardware, int64_t gpus,
                                 int64_t global_batch, int64_t seq) {
  const std::string dir = MESHPLAN_SOURCE_DIR;
  auto m = meshplan::load_model(dir + "/examples/models/" + model + ".yaml");
  if (!m) m = meshplan::load_model(dir + "/examples/models/" + model + ".json");
  INFO((m ? std::string() : m.error().one_line()));
  REQUIRE(m.ok());
  auto h = meshplan::load_hardware(hardware, dir + "/hardware-profiles");
  INFO((h ? std::string() : h.error().one_line()));
  REQUIRE(h.ok());
  meshplan::Problem p;
  p.model = *m;
  p.hardware = *h;
  p.job.gpus = gpus;
  p.job.global_batch = global_batch;
  p.job.seq_len = seq;
  return p;
}

/// p as planned under framework f (its parameter-bytes convention).
inline meshplan::Problem on(meshplan::Problem p, meshplan::Framework f) {
  p.job.framework = f;
  p.job.convention = meshplan::framework_spec(f).convention;
  return p;
}

/// The README's export problem: Llama-2 70B on 128 A100-80GB, global batch 1024 of 4096 tokens.
inline meshplan::Problem llama70b() { return problem("llama-2-70b", "a100-80gb-sxm", 128, 1024, 4096); }

/// tp x pp x dp, ZeRO stage, micro-batch size mb, M micro-batches, recompute, sequence parallelism,
/// schedule with v virtual stages (dp_overlap keeps its default, on).
inline meshplan::ParallelConfig config(int tp, int pp, int dp, int zero, int64_t mb, int64_t M,
                                       meshplan::Recompute r, bool sp,
                                       meshplan::ScheduleKind s = meshplan::ScheduleKind::OneFOneB, int v = 1) {
  meshplan::ParallelConfig c;
  c.tp = tp; c.pp = pp; c.dp = dp; c.zero_stage = zero; c.micro_batch_size = mb;
  c.num_micro_batches = M; c.recompute = r; c.sequence_parallel = sp; c.schedule = s;
  c.virtual_stages = v;
  return c;
}

}  // namespace planner_test
