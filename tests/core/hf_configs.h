// The real Hugging Face config.json files of tests/data/hf_configs (SOURCES.md), loaded for the model tests.
#pragma once
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"

namespace meshplan_test {

inline const std::string kHfConfigs = std::string(MESHPLAN_SOURCE_DIR) + "/tests/data/hf_configs/";

/// The named file of tests/data/hf_configs, which must load.
inline meshplan::ModelSpec load_hf_config(const std::string& file) {
  auto r = meshplan::load_model(kHfConfigs + file);
  INFO(file << ": " << (r.ok() ? "" : r.error().one_line()));
  REQUIRE(r.ok());
  return r.value();
}

}  // namespace meshplan_test
