// Problems for the planner tests, built from the shipped model files and hardware profiles.
#pragma once
#include <catch2/catch.hpp>

#include <string>

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

}  // namespace planner_test
