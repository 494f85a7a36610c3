// The model keeps the (B, nh, T, T) attention probabilities only for a backend whose backward reads
// them (the CPU's); a flash-style backend (CUDA: cuDNN or the fp32 kernels) gets none, the stash
// shrinks by exactly their bytes, and the gradients are those of the recomputing backward.
#include <catch2/catch.hpp>

#include "exec_test_util.h"
#include "model_harness.h"
#include "executor/cpu/cpu_backend.h"
#include "executor/model/model_chunk.h"

using namespace meshplan;
using namespace meshplan::exec;

namespace {

class RecomputingCpu : public CpuBackend {
 public:
  RecomputingCpu() : CpuBackend(CpuOptions{}) {}
  bool attention_backward_reads_probs() const override { return false; }
};

struct Outcome {
  uint64_t stash_bytes = 0;
  uint64_t peak_bytes = 0;
  std::vector<float> grads;
};

constexpr int64_t kB = 2, kT = 40, kHeads = 4, kLayers = 2;

Outcome train_one(Backend& be) {
  ChunkSpec s;
  s.model = exec_test::tiny_llama(kLayers);  // 4 heads (kHeads), 2 kv heads, 64 positions
  s.num_layers = kLayers;
  s.has_embedding = true;
  s.has_head = true;
  s.micro_batch_size = kB;
  s.seq_len = kT;
  s.seed = 3;
  ModelChunk chunk(be, s, TpContext{});
  chunk.zero_grads();
  const auto tokens = exec_test::rand_tokens(kB * (kT + 1), s.model.vocab_size, 4);
  std::vector<int32_t> in(kB * kT), tg(kB * kT);
  for (int64_t b = 0; b < kB; ++b) {
    for (int64_t t = 0; t < kT; ++t) {
      in[b * kT + t] = tokens[b * (kT + 1) + t];
      tg[b * kT + t] = tokens[b * (kT + 1) + t + 1];
    }
  }
  be.memory().reset_peak();
  chunk.forward(0, MicroBatchInput{in.data(), tg.data(), nullptr});
  chunk.backward(0, nullptr, BackwardOptions{1.0f, true});
  Outcome o;
  o.stash_bytes = chunk.stash_bytes_per_micro_batch();
  o.peak_bytes = be.memory().peak_bytes();
  o.grads.resize(static_cast<size_t>(chunk.num_params()));
  be.copy_to_host(o.grads.data(), chunk.grads(), o.grads.size() * 4);
  return o;
}

}  // namespace

TEST_CASE("probabilities are kept only for a backend whose backward reads them", "[executor][attention]") {
  auto cpu = make_cpu_backend();
  RecomputingCpu flash;
  REQUIRE(cpu->attention_backward_reads_probs());
  const Outcome kept = train_one(*cpu), recomputed = train_one(flash);
  const uint64_t probs_bytes = static_cast<uint64_t>(kLayers * kB * kHeads * kT * kT) * 4;
  CHECK(kept.stash_bytes - recomputed.stash_bytes == probs_bytes);
  CHECK(kept.peak_bytes > recomputed.peak_bytes);
  CHECK(exec_test::rel_error(recomputed.grads, kept.grads) < 1e-5);
}
