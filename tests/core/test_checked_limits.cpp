// Checked arithmetic (core/checked.h) and the accepted ranges (core/limits.h) at the edges users reach:
// 10T parameters, 1,000,000 GPUs, 1M-token sequences, 10M-token global batches.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "core/checked.h"
#include "core/io.h"
#include "core/limits.h"
#include "core/parallel_config.h"

using namespace meshplan;

TEST_CASE("checked: products and sums report int64 overflow instead of wrapping") {
  CHECK(checked_mul(int64_t{1} << 31, int64_t{1} << 31) == (int64_t{1} << 62));
  CHECK_FALSE(checked_mul(int64_t{1} << 32, int64_t{1} << 31).has_value());
  CHECK_FALSE(checked_mul(INT64_MAX, 2).has_value());
  CHECK(checked_mul(INT64_MAX, -1) == -INT64_MAX);
  CHECK_FALSE(checked_mul(INT64_MIN, -1).has_value());
  CHECK_FALSE(checked_add(INT64_MAX, 1).has_value());
  CHECK(checked_add(INT64_MAX - 1, 1) == INT64_MAX);
  CHECK(checked_product({8, 125, 1000}) == 1000000);
  CHECK_FALSE(checked_product({4294967296, 4294967296, 1}).has_value());
  CHECK(product_within({1024, 1024}, 1 << 20) == (1 << 20));
  CHECK_FALSE(product_within({1024, 1025}, 1 << 20).has_value());
  CHECK(checked_int(INT32_MAX) == INT32_MAX);
  CHECK_FALSE(checked_int(int64_t{1} << 31).has_value());
}

namespace {

// ~10T parameters: GPT-style (plain 4h MLP, MHA, untied head), h = 65536, L = 200.
ModelSpec ten_trillion() {
  ModelSpec m;
  m.name = "gpt-10t";
  m.hidden_size = 65536; m.num_layers = 200; m.num_heads = 512; m.num_kv_heads = 512;
  m.intermediate_size = 4 * 65536; m.vocab_size = 51200; m.max_position_embeddings = 0;
  m.mlp = MlpKind::Plain;
  return m;
}

}  // namespace

TEST_CASE("limits: a 10T-parameter model is counted exactly") {
  const ModelSpec m = ten_trillion();
  REQUIRE(validate_model(m, "t").empty());
  // By hand: layer = 4h^2 (Q,K,V,O) + 2*h*4h (MLP) + 2h (RMSNorm gains) = 12h^2 + 2h;
  // embedding V*h, untied head V*h, final norm h.
  const int64_t h = 65536, L = 200, V = 51200;
  const int64_t expected = L * (12 * h * h + 2 * h) + 2 * V * h + h;
  CHECK(expected == 10'314'658'676'736);  // ~10.3T
  REQUIRE(m.exact_parameters().has_value());
  CHECK(*m.exact_parameters() == expected);
  // Below 2^53 the double count is exact too.
  CHECK(m.num_parameters() == static_cast<double>(expected));
}

TEST_CASE("limits: parameter counts above 1e15 or overflowing int64 are refused") {
  ModelSpec m = ten_trillion();
  m.hidden_size = limits::kMaxHidden;          // 2^20
  m.num_heads = m.num_kv_heads = 1024;
  m.intermediate_size = limits::kMaxIntermediate;
  m.num_layers = limits::kMaxLayers;           // 12h^2 * 1e5 ~ 1.3e18 parameters, still in int64
  REQUIRE(m.exact_parameters().has_value());
  const ErrorList e = validate_model(m, "big.yaml");
  REQUIRE(e.size() == 1);
  CHECK(e.front().message.find("1000000000000000") != std::string::npos);
  m.num_layers = int64_t{1} << 40;             // the product itself overflows int64
  CHECK_FALSE(m.exact_parameters().has_value());
}

TEST_CASE("limits: model fields outside their ranges name the range") {
  ModelSpec m = ten_trillion();
  m.num_layers = 1'000'000'000;
  ErrorList e = validate_model(m, "m.yaml");
  REQUIRE_FALSE(e.empty());
  CHECK(e.front().field == "num_hidden_layers");
  CHECK(e.front().message.find("1..100000") != std::string::npos);
  m = ten_trillion();
  m.vocab_size = 1'000'000'000'000'000;
  e = validate_model(m, "m.yaml");
  REQUIRE_FALSE(e.empty());
  CHECK(e.front().field == "vocab_size");
}

TEST_CASE("limits: 1,000,000 GPUs, 1M-token sequences and 10M-token batches are valid jobs") {
  Job job;
  job.gpus = 1'000'000;
  job.seq_len = 1 << 20;              // 1,048,576 tokens
  job.global_batch = 10;              // 10,485,760 tokens per step
  CHECK(validate_job(job, "t").empty());
  job.gpus = limits::kMaxGpus + 1;
  REQUIRE(validate_job(job, "t").size() == 1);
  CHECK(validate_job(job, "t").front().message.find("1..16777216") != std::string::npos);
  job.gpus = 8;
  job.global_batch = limits::kMaxGlobalBatch;  // 2^30 sequences x 2^20 tokens > 2^40 tokens
  const ErrorList e = validate_job(job, "t");
  REQUIRE(e.size() == 1);
  CHECK(e.front().message.find("tokens per step") != std::string::npos);
}

TEST_CASE("limits: a 1,000,000-GPU layout checks gpus = tp*pp*dp and the batch exactly") {
  Problem p;
  p.model = ten_trillion();
  p.hardware.gpus_per_node = 8;
  p.job.gpus = 1'000'000;
  p.job.seq_len = 8192;
  p.job.global_batch = 1250;          // 10,240,000 tokens
  ParallelConfig c;
  c.tp = 8; c.pp = 100; c.dp = 1250; c.micro_batch_size = 1; c.num_micro_batches = 1;
  CHECK(validate_config(p, c, "t").empty());
  c.dp = 1249;  // tp*pp*dp = 999,200: refused, not rounded
  CHECK_FALSE(validate_config(p, c, "t").empty());
  c.dp = 1250;
  c.micro_batch_size = int64_t{1} << 62;  // mb * M * dp overflows int64: a mismatch, not a wrap
  c.num_micro_batches = 4;
  CHECK_FALSE(validate_config(p, c, "t").empty());
}

TEST_CASE("limits: input text must be UTF-8 and shallow") {
  CHECK(check_text_input("a: 1\n", "f").has_value() == false);
  CHECK(check_text_input("name: caf\xc3\xa9\n", "f").has_value() == false);
  auto bad = check_text_input("name: caf\xe9\n", "f.yaml");
  REQUIRE(bad.has_value());
  CHECK(bad->one_line().find("not UTF-8") != std::string::npos);
  CHECK(check_text_input("x: " + std::string(64, '[') + std::string(64, ']'), "f").has_value());
  CHECK_FALSE(check_text_input("x: " + std::string(40, '[') + std::string(40, ']'), "f").has_value());
  // Brackets in comments and quoted strings are not nesting.
  CHECK_FALSE(check_text_input("# " + std::string(100, '[') + "\na: 1  # " + std::string(100, '{') + "\n", "f"));
  CHECK_FALSE(check_text_input("a: \"" + std::string(100, '[') + "\"\nb: 'it''s [['\n", "f"));
  auto deep = parse_model("hidden_size: 4\nx: " + std::string(100000, '[') + std::string(100000, ']'), "d.yaml");
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().message.find("nesting too deep") != std::string::npos);
}
