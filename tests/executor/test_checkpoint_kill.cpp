// Acceptance 4: a rank killed in the middle of writing a checkpoint never leaves the latest
// checkpoint unreadable: --resume then starts from the previous complete one, exactly.
#include <catch2/catch.hpp>

#include "run_helpers.h"

using namespace meshplan_test;

TEST_CASE("checkpoint: kill during a checkpoint write keeps the previous one loadable") {
  const std::string dir = temp_dir("ckpt-kill");
  const std::string plan = write_plan(dir, "dp2-zero2", 2, "--zero 2");
  REQUIRE_FALSE(plan.empty());
  const std::string base = "--plan " + plan + " --steps 4 --format json";
  std::string out;
  REQUIRE(run_meshplan(2, base + " --output " + dir + "/full.json", &out) == 0);
  std::ifstream full_in(dir + "/full.json");
  const std::string full((std::istreambuf_iterator<char>(full_in)), std::istreambuf_iterator<char>());
  const std::vector<std::string> full_losses = json_number_texts(full, "loss");
  REQUIRE(full_losses.size() == 4);

  // Checkpoints after steps 2 and 4; rank 1 dies half-way through its shard of step 4.
  const std::string ckpt = " --checkpoint-dir " + dir + "/ckpt --checkpoint-every 2";
  int rc = run_meshplan(2, base + ckpt + " --test-crash-in-checkpoint 4", &out);
  INFO(out);
  CHECK(rc != 0);
  CHECK(std::filesystem::exists(dir + "/ckpt/step-00000004/rank-00001.bin.tmp"));
  CHECK_FALSE(std::filesystem::exists(dir + "/ckpt/step-00000004/MANIFEST"));

  rc = run_meshplan(2, base + ckpt + " --resume --output " + dir + "/resumed.json", &out);
  REQUIRE(rc == 0);
  std::ifstream res_in(dir + "/resumed.json");
  const std::string resumed((std::istreambuf_iterator<char>(res_in)), std::istreambuf_iterator<char>());
  CHECK(json_numbers(resumed, "resumed_from_step") == std::vector<double>{2});
  const std::vector<std::string> losses = json_number_texts(resumed, "loss");
  REQUIRE(losses.size() == 2);
  CHECK(losses[0] == full_losses[2]);
  CHECK(losses[1] == full_losses[3]);
  std::filesystem::remove_all(dir);
}
