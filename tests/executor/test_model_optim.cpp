// Optimizer pieces: AdamW vs its double twin, decay only where allowed, warmup + cosine, global-norm
// clipping across TP ranks; and a short training run on the shipped text whose loss must fall.
#include <catch2/catch.hpp>
#include <cmath>

#include "executor/data/batches.h"
#include "executor/optim/adamw.h"
#include "executor/optim/grad_clip.h"
#include "executor/optim/lr_schedule.h"
#include "model_harness.h"

using namespace meshplan;
using namespace meshplan::exec;
using namespace exec_test;

TEST_CASE("backend AdamW matches the double-precision reference", "[executor][optim]") {
  auto be = make_cpu_backend();
  const int64_t n = 1000;
  auto p1 = randn(n, 1), g = randn(n, 2, 0.01f), m1 = randn(n, 3, 0.001f), v1 = randn(n, 4, 1e-5f);
  for (float& x : v1) x = std::fabs(x);
  auto p2 = p1, m2 = m1, v2 = v1;
  const AdamWStep s{1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.19f, 0.0975f};
  be->adamw(p1.data(), g.data(), m1.data(), v1.data(), n, s);
  adamw_reference(p2.data(), g.data(), m2.data(), v2.data(), n, s);
  CHECK(rel_error(p1, p2) < 1e-6);
  CHECK(rel_error(m1, m2) < 1e-6);
  CHECK(rel_error(v1, v2) < 1e-6);
}

TEST_CASE("AdamW decays weights but not norm gains", "[executor][optim]") {
  auto be = make_cpu_backend();
  const ParamLayout layout = make_param_layout(tiny_llama(1), 0, 1, true, true, 0, 1);
  std::vector<float> params(layout.total, 1.0f), grads(layout.total, 0.0f);
  AdamW opt(*be, layout.total, flat_segments(layout, 0, layout.total), AdamWConfig{});
  opt.step(params.data(), grads.data(), 0.5f);
  for (const ParamView& v : layout.views) {
    INFO(v.name);
    CHECK(params[v.offset] == (v.weight_decay ? Approx(1.0f - 0.5f * 0.1f) : Approx(1.0f)));
  }
  CHECK(opt.step_count() == 1);
}

TEST_CASE("learning rate warms up linearly then follows a cosine to min_lr", "[executor][optim]") {
  const LrSchedule s{1.0f, 0.1f, 4, 14};
  CHECK(learning_rate(s, 0) == Approx(0.25f));
  CHECK(learning_rate(s, 3) == Approx(1.0f));
  CHECK(learning_rate(s, 4) == Approx(1.0f));
  CHECK(learning_rate(s, 9) == Approx(0.55f));  // halfway: (max + min) / 2
  CHECK(learning_rate(s, 14) == Approx(0.1f));
  CHECK(learning_rate(s, 100) == Approx(0.1f));
}

TEST_CASE("global gradient norm over TP shards equals the one-rank norm", "[executor][optim]") {
  const ModelSpec m = tiny_llama(2);
  const auto toks = rand_tokens(2 * 9, m.vocab_size, 8);
  const RunResult one = run_model(m, Split{}, 2, 8, 1, toks);
  double expected = 0;
  for (const auto& [name, g] : one.grads) expected += dot(g, g);
  expected = std::sqrt(expected);
  for (bool sp : {false, true}) {
    std::vector<double> norms(2);
    run_local_ranks(2, [&](int rank, Communicator& comm) {
      auto be = make_cpu_backend();
      ChunkSpec s;
      s.model = m;
      s.num_layers = 2;
      s.has_embedding = s.has_head = true;
      s.micro_batch_size = 2;
      s.seq_len = 8;
      s.seed = 7;
      ModelChunk chunk(*be, s, TpContext{rank, 2, &comm, sp});
      std::vector<int32_t> in(16), tg(16);
      for (int b = 0; b < 2; ++b) {
        for (int t = 0; t < 8; ++t) in[b * 8 + t] = toks[b * 9 + t], tg[b * 8 + t] = toks[b * 9 + t + 1];
      }
      chunk.forward(0, MicroBatchInput{in.data(), tg.data(), nullptr});
      chunk.backward(0, nullptr, BackwardOptions{});
      const std::vector<GradRange> ranges{{chunk.grads(), flat_segments(chunk.layout(), 0, chunk.num_params())}};
      auto reduce = [&](double local) {
        float x = static_cast<float>(local);
        comm.all_reduce_sum(&x, 1);
        return static_cast<double>(x);
      };
      norms[rank] = clip_grad_norm(*be, ranges, rank == 0, reduce, 0.5f);
      // After clipping, the norm is max_norm.
      norms[rank] = std::fabs(global_grad_norm(*be, ranges, rank == 0, reduce) - 0.5) < 1e-4 ? norms[rank] : -1.0;
    });
    INFO("sp " << sp);
    CHECK(norms[0] == Approx(expected).epsilon(1e-5));
    CHECK(norms[1] == norms[0]);
  }
  CHECK(clip_factor(2.0, 1.0f) == Approx(0.5f).epsilon(1e-5));
  CHECK(clip_factor(0.5, 1.0f) == 1.0f);
  CHECK(clip_factor(5.0, 0.0f) == 1.0f);
}

TEST_CASE("training on the shipped text makes the loss fall", "[executor][optim]") {
  auto src = open_data_file(std::string(MESHPLAN_SOURCE_DIR) + "/examples/data/licenses.txt", 256);
  REQUIRE(src.ok());
  ModelSpec m = tiny_llama(2);
  m.vocab_size = 256;
  m.hidden_size = 64;
  m.intermediate_size = 128;
  auto be = make_cpu_backend();
  ChunkSpec s;
  s.model = m;
  s.num_layers = 2;
  s.has_embedding = s.has_head = true;
  s.micro_batch_size = 8;
  s.seq_len = 32;
  ModelChunk chunk(*be, s, TpContext{});
  AdamW opt(*be, chunk.num_params(), flat_segments(chunk.layout(), 0, chunk.num_params()));
  const LrSchedule lr{3e-3f, 3e-4f, 5, 60};
  std::vector<int32_t> in(8 * 32), tg(8 * 32);
  std::vector<float> losses;
  for (int64_t step = 0; step < 60; ++step) {
    load_micro_batch(*src.value(), BatchCoord{step, 0, 1, 0, 1, 8, 32}, in.data(), tg.data());
    chunk.zero_grads();
    chunk.forward(0, MicroBatchInput{in.data(), tg.data(), nullptr});
    losses.push_back(chunk.loss(0));
    chunk.backward(0, nullptr, BackwardOptions{});
    clip_grad_norm(*be, {{chunk.grads(), flat_segments(chunk.layout(), 0, chunk.num_params())}}, true, nullptr, 1.0f);
    opt.step(chunk.params(), chunk.grads(), learning_rate(lr, step));
  }
  double last = 0;
  for (size_t i = losses.size() - 5; i < losses.size(); ++i) last += losses[i] / 5;
  std::printf("text training: loss %.3f -> %.3f (mean of the last 5 of 60 steps)\n", losses[0], last);
  CHECK(losses[0] == Approx(std::log(256.0)).margin(0.1));
  CHECK(last < 3.2);
}
