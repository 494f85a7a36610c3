// Model chunk: layout-independent initialisation, and the same losses and gradients for every TP
// (with and without sequence parallelism), pipeline split, recompute mode and plain-twin backend.
#include <catch2/catch.hpp>
#include <atomic>
#include <cmath>

#include "model_harness.h"

using namespace meshplan;
using namespace meshplan::exec;
using namespace exec_test;

namespace {
constexpr int64_t kB = 2, kT = 8;
constexpr int kM = 2;
const std::vector<int32_t>& tokens() {
  static const auto t = rand_tokens(kM * kB * (kT + 1), 64, 99);
  return t;
}
const RunResult& baseline() {
  static const RunResult r = run_model(tiny_llama(), Split{}, kB, kT, kM, tokens());
  return r;
}
}  // namespace

TEST_CASE("initial loss is near ln(vocab) and gradients are finite", "[executor][model]") {
  const RunResult& r = baseline();
  for (float l : r.losses) CHECK(std::fabs(l - std::log(64.0)) < 0.1);
  for (const auto& [name, g] : r.grads) {
    double s = 0;
    for (float x : g) s += static_cast<double>(x) * x;
    INFO(name);
    CHECK(std::isfinite(s));
    CHECK(s > 0);
  }
}

TEST_CASE("parameters are identical for every TP and pipeline split", "[executor][model]") {
  Split s;
  s.tp = 2;
  s.layers_per_chunk = {1, 1};
  const RunResult r = run_model(tiny_llama(), s, kB, kT, kM, tokens());
  REQUIRE(r.params.size() == baseline().params.size());
  for (const auto& [name, p] : baseline().params) {
    INFO(name);
    CHECK(r.params.at(name) == p);  // bit-identical
  }
}

TEST_CASE("tensor parallel matches one rank", "[executor][model]") {
  for (int tp : {2}) {
    for (bool sp : {false, true}) {
      Split s;
      s.tp = tp;
      s.sp = sp;
      const RunResult r = run_model(tiny_llama(), s, kB, kT, kM, tokens());
      std::string worst;
      INFO("tp=" << tp << " sp=" << sp);
      for (int mb = 0; mb < kM; ++mb) CHECK(r.losses[mb] == Approx(baseline().losses[mb]).epsilon(1e-6));
      const double e = max_grad_error(r, baseline(), &worst);
      INFO("worst " << worst << " " << e);
      CHECK(e < 1e-5);
    }
  }
}

TEST_CASE("pipeline chunks match one chunk", "[executor][model]") {
  for (std::vector<int> chunks : {std::vector<int>{1, 1}, {2, 0}, {0, 2}, {0, 1, 1, 0}}) {
    Split s;
    s.layers_per_chunk = chunks;
    const RunResult r = run_model(tiny_llama(), s, kB, kT, kM, tokens());
    for (int mb = 0; mb < kM; ++mb) CHECK(r.losses[mb] == baseline().losses[mb]);
    CHECK(max_grad_error(r, baseline()) == 0.0);  // the same arithmetic in the same order
  }
}

TEST_CASE("recompute modes give the same gradients and less memory", "[executor][model]") {
  uint64_t peak_none = baseline().peak_bytes, previous = peak_none;
  for (Recompute rc : {Recompute::Selective, Recompute::Full}) {
    Split s;
    s.recompute = rc;
    const RunResult r = run_model(tiny_llama(), s, kB, kT, kM, tokens());
    INFO(to_string(rc));
    for (int mb = 0; mb < kM; ++mb) CHECK(r.losses[mb] == baseline().losses[mb]);
    CHECK(max_grad_error(r, baseline()) < 1e-6);
    CHECK(r.peak_bytes < previous);
    previous = r.peak_bytes;
  }
}

TEST_CASE("tp2 with sequence parallelism, pipeline and full recompute together", "[executor][model]") {
  Split s;
  s.tp = 2;
  s.sp = true;
  s.layers_per_chunk = {1, 1};
  s.recompute = Recompute::Full;
  const RunResult r = run_model(tiny_llama(), s, kB, kT, kM, tokens());
  for (int mb = 0; mb < kM; ++mb) CHECK(r.losses[mb] == Approx(baseline().losses[mb]).epsilon(1e-6));
  CHECK(max_grad_error(r, baseline()) < 1e-5);
}

TEST_CASE("a vocabulary-chunked loss matches the whole logits, with TP and SP too, in less memory", "[executor][model]") {
  // 16 rows x 64 vocabulary: 4 KB of fp32 logits on one rank. A 1 KB budget gives chunks of 16
  // columns (4 chunks on one rank; 2 per rank of the 32-column TP shards), 768 bytes chunks of 12
  // (a partial last chunk: 64 = 5 x 12 + 4).
  for (uint64_t budget : {uint64_t{1024}, uint64_t{768}}) {
    for (int tp : {1, 2}) {
      for (bool sp : {false, true}) {
        if (tp == 1 && sp) continue;
        Split s;
        s.tp = tp;
        s.sp = sp;
        s.loss_chunk_bytes = budget;
        Split whole = s;
        whole.loss_chunk_bytes = 0;
        const RunResult r = run_model(tiny_llama(), s, kB, kT, kM, tokens());
        const RunResult ref = tp == 1 ? baseline() : run_model(tiny_llama(), whole, kB, kT, kM, tokens());
        INFO("budget " << budget << " tp " << tp << " sp " << sp);
        for (int mb = 0; mb < kM; ++mb) CHECK(r.losses[mb] == Approx(ref.losses[mb]).epsilon(1e-6));
        std::string worst;
        const double e = max_grad_error(r, ref, &worst);
        INFO("worst " << worst << " " << e);
        CHECK(e < 1e-5);
        // GPipe order keeps both micro-batches' stashes: 2 x (16 x 64 / tp) x 4 bytes of logits gone,
        // one chunk's (16 x columns x 4) alive instead.
        CHECK(r.peak_bytes < ref.peak_bytes);
      }
    }
  }
}

TEST_CASE("plain twins (naive GEMM, reference attention) match the fast paths", "[executor][model]") {
  Split s;
  s.cpu = CpuOptions{true, true};
  const RunResult r = run_model(tiny_llama(), s, kB, kT, kM, tokens());
  for (int mb = 0; mb < kM; ++mb) CHECK(r.losses[mb] == Approx(baseline().losses[mb]).epsilon(1e-6));
  CHECK(max_grad_error(r, baseline()) < 1e-5);
}

TEST_CASE("validate_chunk names what TP cannot split", "[executor][model]") {
  ChunkSpec s;
  s.model = tiny_llama();
  s.num_layers = 2;
  s.seq_len = 8;
  CHECK(validate_chunk(s, TpContext{0, 2, nullptr, false}, "plan.json").empty());
  const ErrorList errs = validate_chunk(s, TpContext{0, 4, nullptr, false}, "plan.json");
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].field == "num_key_value_heads");
  s.seq_len = 3;
  s.micro_batch_size = 1;
  CHECK(validate_chunk(s, TpContext{0, 2, nullptr, true}, "plan.json").size() == 1);
}

TEST_CASE("validate_chunk refuses a sliding window longer sequences would need (the executor attends fully)",
          "[executor][model]") {
  ChunkSpec s;
  s.model = tiny_llama();
  s.num_layers = 2;
  s.seq_len = 8;
  s.model.sliding_window = 4;
  s.model.sliding_window_layers = 1;
  const ErrorList errs = validate_chunk(s, TpContext{}, "plan.json");
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].field == "sliding_window");
  s.seq_len = 4;  // the window covers the sequence: full causal attention is exactly right
  CHECK(validate_chunk(s, TpContext{}, "plan.json").empty());
}

TEST_CASE("validate_chunk refuses chunked attention longer sequences would need (Llama 4)", "[executor][model]") {
  ChunkSpec s;
  s.model = tiny_llama();
  s.num_layers = 2;
  s.seq_len = 8;
  s.model.attention_chunk = 4;
  s.model.chunked_layers = 1;
  const ErrorList errs = validate_chunk(s, TpContext{}, "plan.json");
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].field == "attention_chunk_size");
  s.seq_len = 4;  // one chunk holds the sequence: plain causal attention
  CHECK(validate_chunk(s, TpContext{}, "plan.json").empty());
}

TEST_CASE("tp4 on a multi-head model matches one rank", "[executor][model]") {
  ModelSpec m = tiny_llama();
  m.num_kv_heads = 4;
  const RunResult one = run_model(m, Split{}, kB, kT, kM, tokens());
  for (bool sp : {false, true}) {
    Split s;
    s.tp = 4;
    s.sp = sp;
    s.layers_per_chunk = {1, 1};
    const RunResult r = run_model(m, s, kB, kT, kM, tokens());
    INFO("sp " << sp);
    for (int mb = 0; mb < kM; ++mb) CHECK(r.losses[mb] == Approx(one.losses[mb]).epsilon(1e-6));
    CHECK(max_grad_error(r, one) < 1e-5);
  }
}

TEST_CASE("micro-batches in flight in any order give the same gradients", "[executor][model]") {
  auto be = make_cpu_backend();
  const ModelSpec m = tiny_llama();
  std::vector<std::unique_ptr<ModelChunk>> chunks;
  for (const ChunkSpec& s : chunk_specs(m, {1, 1}, kB, kT, Recompute::None, 7))
    chunks.push_back(std::make_unique<ModelChunk>(*be, s, TpContext{}));
  std::vector<std::vector<int32_t>> in(kM), tg(kM);
  for (int mb = 0; mb < kM; ++mb) {
    MicroBatchTokens tok = micro_batch_tokens(tokens(), int64_t{mb} * kB, kB, kT);
    in[mb] = std::move(tok.in);
    tg[mb] = std::move(tok.tg);
  }
  // 1F1B-like on two stages: F0 F1 on stage 0, stage 1 runs F0 B0, then F1 B1; releases early.
  std::vector<const float*> acts(kM);
  for (int mb = 0; mb < kM; ++mb) acts[mb] = chunks[0]->forward(mb, MicroBatchInput{in[mb].data(), nullptr, nullptr});
  CHECK(chunks[0]->micro_batches_in_flight() == kM);
  for (int mb = 0; mb < kM; ++mb) {
    chunks[1]->forward(mb, MicroBatchInput{nullptr, tg[mb].data(), acts[mb]});
    chunks[0]->release_output(mb);  // the copy inside chunk 1 is what counts
    const float* g = chunks[1]->backward(mb, nullptr, BackwardOptions{1.0f / kM, mb == kM - 1});
    chunks[0]->backward(mb, g, BackwardOptions{1.0f / kM, mb == kM - 1});
    CHECK(chunks[1]->loss(mb) == baseline().losses[mb]);
  }
  CHECK(chunks[0]->micro_batches_in_flight() == 0);
  double worst = 0;
  for (auto& c : chunks) {
    for (const ParamView& v : c->views()) {
      std::vector<float> g(c->grads() + v.offset, c->grads() + v.offset + v.numel());
      worst = std::max(worst, rel_error(g, baseline().grads.at(v.name)));
    }
  }
  CHECK(worst < 1e-6);
}

TEST_CASE("hooks: ZeRO-3 style gather/release balance and grads_ready in reverse order", "[executor][model]") {
  auto be = make_cpu_backend();
  ChunkSpec s;
  s.model = tiny_llama();
  s.num_layers = 2;
  s.has_embedding = s.has_head = true;
  s.micro_batch_size = kB;
  s.seq_len = kT;
  s.seed = 7;
  s.recompute = Recompute::Full;
  s.allocate_params = false;
  // The hooks own per-block parameter copies made from init_params, like a ZeRO-3 gather.
  std::map<int, std::vector<float>> gathered;
  std::vector<int> ready;
  int live = 0, max_live = 0;
  ModelChunk* self = nullptr;
  ChunkHooks hooks;
  hooks.gather_params = [&](int block, Pass) -> const float* {
    const ParamBlock& b = self->blocks()[block];
    gathered[block].resize(b.count);
    self->init_params(gathered[block].data(), b.offset, b.count);
    max_live = std::max(max_live, ++live);
    return gathered[block].data();
  };
  hooks.release_params = [&](int block, Pass) {
    gathered.erase(block);
    --live;
  };
  hooks.grads_ready = [&](int block) { ready.push_back(block); };
  ModelChunk chunk(*be, s, TpContext{}, hooks);
  self = &chunk;
  CHECK(chunk.params() == nullptr);
  std::vector<int32_t> in, tg;
  for (int64_t i = 0; i < kB * kT; ++i) {
    in.push_back(tokens()[(i / kT) * (kT + 1) + i % kT]);
    tg.push_back(tokens()[(i / kT) * (kT + 1) + i % kT + 1]);
  }
  chunk.forward(0, MicroBatchInput{in.data(), tg.data(), nullptr});
  CHECK(chunk.loss(0) == baseline().losses[0]);
  chunk.backward(0, nullptr, BackwardOptions{1.0f, true});
  CHECK(live == 0);
  CHECK(max_live == 1);  // one block's weights at a time
  CHECK(ready == std::vector<int>{3, 2, 1, 0});  // head, layer 1, layer 0, embedding
}

TEST_CASE("stash bytes per micro-batch match the memory tracker exactly", "[executor][model]") {
  for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    for (int tp : {1, 2}) {
      for (bool chunked : {false, true}) {
        std::vector<int64_t> measured(2), expected(2);
        std::atomic<int> left_in_flight{0};
        run_local_ranks(tp, [&](int rank, Communicator& comm) {
          auto be = make_cpu_backend();
          for (int c = 0; c < 2; ++c) {  // first chunk (embedding) and last chunk (head)
            ChunkSpec s;
            s.model = tiny_llama(3);
            s.first_layer = c;
            s.num_layers = c == 0 ? 1 : 2;
            s.has_embedding = c == 0;
            s.has_head = c == 1;
            s.micro_batch_size = kB;
            s.seq_len = kT;
            s.recompute = rc;
            s.loss_chunk_bytes = chunked ? 1024 : 0;  // the head chunk's logits in vocabulary chunks
            ModelChunk chunk(*be, s, TpContext{rank, tp, &comm, tp > 1});
            std::vector<int32_t> tok(kB * kT, 1);
            std::vector<float> act(chunk.activation_numel(), 0.5f);
            const uint64_t before = be->memory().held_bytes();
            chunk.forward(0, MicroBatchInput{tok.data(), tok.data(), act.data()});
            if (rank == 0) {
              measured[c] = static_cast<int64_t>(be->memory().held_bytes() - before);
              expected[c] = static_cast<int64_t>(chunk.stash_bytes_per_micro_batch());
            }
            chunk.backward(0, act.data(), BackwardOptions{});
            left_in_flight += chunk.micro_batches_in_flight();  // Catch2 is not thread-safe
          }
        });
        INFO(to_string(rc) << " tp " << tp << " chunked loss " << chunked);
        CHECK(measured == expected);
        CHECK(left_in_flight == 0);
      }
    }
  }
}
