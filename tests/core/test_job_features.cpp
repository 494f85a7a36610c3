// Tests of the issue-11 layout rules (CP, FP8, gradient compression) and the NVLink domain of profiles.
#include <catch2/catch.hpp>

#include "core/io.h"
#include "core/job_features.h"

using namespace meshplan;

static const std::string kProfiles = std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles";

static Problem llama8b_on(int64_t gpus, int64_t seq) {
  Problem p;
  p.model.hidden_size = 4096; p.model.num_layers = 32; p.model.num_heads = 32;
  p.model.num_kv_heads = 8; p.model.intermediate_size = 14336; p.model.vocab_size = 128256;
  p.hardware.name = "test"; p.hardware.gpus_per_node = 8; p.hardware.peak_flops = {{"bf16", 989e12}};
  p.job.gpus = gpus; p.job.global_batch = 8; p.job.seq_len = seq;
  return p;
}

static ParallelConfig cfg(int tp, int cp, int dp, int64_t mb_count) {
  ParallelConfig c;
  c.tp = tp; c.cp = cp; c.dp = dp; c.micro_batch_size = 1; c.num_micro_batches = mb_count;
  return c;
}

TEST_CASE("cp: DP = gpus / (tp * cp * pp)") {
  Problem p = llama8b_on(16, 32768);
  CHECK(batch_dp(p.job, 2, 4, 1) == 2);
  CHECK(batch_dp(p.job, 2, 3, 1) == 0);
  CHECK(validate_config(p, cfg(2, 4, 2, 4), "t").empty());
  const ErrorList e = validate_config(p, cfg(2, 4, 4, 2), "t");  // 2*4*4 = 32 != 16
  REQUIRE(!e.empty());
  CHECK(e.front().one_line().find("tp*cp*pp=8") != std::string::npos);
}

TEST_CASE("cp: causal load balancing needs seq % (2 cp) == 0 - fused attention - a2a head rule") {
  Problem p = llama8b_on(16, 32768 + 8);  // divisible by 8, not by 16
  ErrorList e = validate_config(p, cfg(2, 8, 1, 8), "t");
  REQUIRE(e.size() == 1);
  CHECK(e.front().field == "--cp");
  CHECK(e.front().message.find("2*cp=16") != std::string::npos);
  p.job.seq_len = 32768;
  p.job.knobs.attention = AttentionKind::Materialized;
  CHECK(validate_config(p, cfg(2, 8, 1, 8), "t").size() == 1);
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.cp_comm = CpComm::AllToAll;  // kv heads / tp = 4, not a multiple of 8
  CHECK(validate_config(p, cfg(2, 8, 1, 8), "t").size() == 1);
  p.job.cp_comm = CpComm::AllGather;
  CHECK(validate_config(p, cfg(2, 8, 1, 8), "t").empty());
}

TEST_CASE("fp8 is refused on a profile without an fp8 peak - compression outside ZeRO 0") {
  Problem p = llama8b_on(8, 4096);
  p.job.fp8 = Fp8Recipe::Delayed;
  ErrorList e = validate_config(p, cfg(1, 1, 8, 1), "t");
  REQUIRE(e.size() == 1);
  CHECK(e.front().field == "--fp8");
  p.hardware.peak_flops["fp8"] = 1979e12;
  CHECK(validate_config(p, cfg(1, 1, 8, 1), "t").empty());
  p.job.compression = GradCompression::OneBitAdam;
  ParallelConfig z1 = cfg(1, 1, 8, 1);
  z1.zero_stage = 1;
  e = validate_config(p, z1, "t");
  REQUIRE(e.size() == 1);
  CHECK(e.front().field == "--grad-compression");
}

TEST_CASE("names parse and print back") {
  for (auto c : {CpComm::P2p, CpComm::AllGather, CpComm::AllToAll}) CHECK(parse_cp_comm(to_string(c)) == c);
  for (auto r : {Fp8Recipe::None, Fp8Recipe::Delayed, Fp8Recipe::Current, Fp8Recipe::Blockwise, Fp8Recipe::Mxfp8})
    CHECK(parse_fp8_recipe(to_string(r)) == r);
  CHECK(!parse_fp8_recipe("e4m3"));
}

TEST_CASE("NVLink domain: GB200 NVL72 profile and reader range check and TP rule follows the domain") {
  auto gb = load_hardware("gb200-nvl72", kProfiles);
  REQUIRE(gb.ok());
  CHECK(gb.value().gpus_per_node == 4);
  CHECK(gb.value().nvlink_domain() == 72);
  CHECK(gb.value().peak_flops_for("fp8") == 5000e12);
  CHECK(gb.value().memory_bytes == 198.675e9);  // 189471 MiB, nvidia-smi's total
  auto h100 = load_hardware("h100-80gb-sxm", kProfiles);
  REQUIRE(h100.ok());
  CHECK(h100.value().nvlink_domain() == 8);
  std::string text = hardware_to_yaml(gb.value());
  auto again = parse_hardware(text, "round.yaml");
  REQUIRE(again.ok());
  CHECK(again.value().nvlink_domain_gpus == 72);
  const size_t at = text.find("nvlink_domain_gpus: 72");
  REQUIRE(at != std::string::npos);
  auto bad = parse_hardware(text.replace(at, 22, "nvlink_domain_gpus: 70"), "bad.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "node.nvlink_domain_gpus");
  // TP 8 spans two 4-GPU trays but stays inside the NVLink domain: allowed.
  Problem p = llama8b_on(72, 4096);
  p.job.global_batch = 9;
  p.hardware = gb.value();
  CHECK(validate_config(p, cfg(8, 1, 9, 1), "t").empty());
}
