// Trains a small (MoE) Llama model on a grid of ep x cp x tp ranks for a few AdamW steps and
// returns the losses per step and the full gradients of step 0, for equivalence tests of expert
// and context parallelism. One rank routine (train_ep_cp_rank) runs on in-process thread groups
// (run_ep_cp_local) or on MPI sub-communicators (test_dist_ep_cp.cpp).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exec_test_util.h"
#include "executor/comm_local.h"
#include "executor/model/model_chunk.h"
#include "executor/optim/adamw.h"
#include "executor/parallel/context_parallel.h"
#include "model_harness.h"

namespace exec_test {

/// tiny_llama with `layers` layers, the first `dense` dense and the rest MoE: 4 experts, top-2.
inline meshplan::ModelSpec tiny_moe(int64_t layers = 3, int64_t dense = 1) {
  meshplan::ModelSpec m = tiny_llama(layers);
  m.name = "tiny-moe";
  m.moe.num_experts = 4;
  m.moe.experts_per_token = 2;
  m.moe.expert_intermediate_size = 24;
  m.moe.first_dense_layers = dense;
  return m;
}

struct Grid {
  int ep = 1, cp = 1, tp = 1;
  std::vector<int> layers_per_chunk;  // empty: one chunk (pipeline chunks run in sequence)
  meshplan::Recompute recompute = meshplan::Recompute::None;
  int world() const { return ep * cp * tp; }
};

/// Coordinates of world rank w: tp fastest, then cp, then ep.
struct GridCoord {
  int tp = 0, cp = 0, ep = 0;
};
inline GridCoord grid_coord(const Grid& g, int w) { return {w % g.tp, (w / g.tp) % g.cp, w / (g.tp * g.cp)}; }

/// One rank's communicators. data: ranks holding the same replicated parameters on different
/// tokens (same tp coordinate: ep*cp of them); expert_data: the same experts (the cp group).
struct RankComms {
  meshplan::exec::Communicator* tp = nullptr;
  meshplan::exec::Communicator* cp = nullptr;
  meshplan::exec::Communicator* ep = nullptr;
  meshplan::exec::Communicator* data = nullptr;
};

struct GridRun {
  std::vector<double> step_losses;                   // mean loss of each step (global batch)
  std::map<std::string, std::vector<float>> grads;   // step 0, full tensors (rank-summed)
  std::map<std::string, std::vector<float>> params;  // initial, full tensors
};

/// Micro-batch m (m = 0..M-1) of the step: ep coordinate m % ep runs it; tokens (steps, M, B, T+1).
inline void train_ep_cp_rank(const meshplan::ModelSpec& model, const Grid& g, int world_rank,
                             const RankComms& c, int64_t B, int64_t T, int M, int steps,
                             const std::vector<int32_t>& tokens, GridRun& out, std::mutex& mu) {
  using namespace meshplan::exec;
  const GridCoord at = grid_coord(g, world_rank);
  auto be = make_cpu_backend();
  EpCpGroups groups{GroupContext{at.ep, g.ep, c.ep}, GroupContext{at.cp, g.cp, c.cp}};
  std::vector<std::unique_ptr<ModelChunk>> net;
  std::vector<std::unique_ptr<AdamW>> opt;
  for (const ChunkSpec& s : chunk_specs(model, g.layers_per_chunk, B, T, g.recompute, 7)) {
    net.push_back(std::make_unique<ModelChunk>(*be, s, TpContext{at.tp, g.tp, c.tp, false}, ChunkHooks{}, groups));
    opt.push_back(std::make_unique<AdamW>(*be, net.back()->num_params(),
                                          flat_segments(net.back()->layout(), 0, net.back()->num_params())));
  }
  {  // initial parameters, each shard from its owner (replicas write the same values)
    std::lock_guard<std::mutex> lock(mu);
    for (auto& ch : net) {
      for (const ParamView& v : ch->views()) {
        const float* p = ch->params() + v.offset;
        place_shard(out.params[v.name], std::vector<float>(p, p + v.numel()), v,
                    v.expert_parallel ? at.ep : at.tp);
      }
    }
  }
  for (int step = 0; step < steps; ++step) {
    double loss_sum = 0;
    std::vector<int> mine;
    for (int mb = at.ep; mb < M; mb += g.ep) mine.push_back(mb);
    for (int mb : mine) {
      const MicroBatchTokens tok = micro_batch_tokens(tokens, (static_cast<int64_t>(step) * M + mb) * B, B, T);
      const std::vector<int32_t> lin = cp_local_tokens(tok.in.data(), B, T, g.cp, at.cp);
      const std::vector<int32_t> ltg = cp_local_tokens(tok.tg.data(), B, T, g.cp, at.cp);
      const float* act = nullptr;
      for (auto& ch : net) act = ch->forward(mb, MicroBatchInput{lin.data(), ltg.data(), act});
      loss_sum += net.back()->loss(mb) / (static_cast<double>(M) * g.cp);
    }
    for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
      const float* grad = nullptr;
      for (size_t i = net.size(); i-- > 0;) {
        grad = net[i]->backward(*it, grad, BackwardOptions{1.0f / (M * g.cp), false});
      }
    }
    // Replicated parameters: sum over every data rank; experts: over the ranks holding them.
    for (auto& ch : net) {
      for (const ParamView& v : ch->views()) {
        Communicator* group = v.expert_parallel ? c.cp : c.data;
        if (group != nullptr && group->size() > 1) group->all_reduce_sum(ch->grads() + v.offset, v.numel());
      }
    }
    float loss = static_cast<float>(loss_sum);
    if (c.data != nullptr && c.data->size() > 1) c.data->all_reduce_sum(&loss, 1);
    {
      std::lock_guard<std::mutex> lock(mu);
      if (world_rank == 0) out.step_losses.push_back(loss);
      for (auto& ch : net) {
        if (step > 0 || at.cp != 0) break;
        for (const ParamView& v : ch->views()) {
          if (!v.expert_parallel && at.ep != 0) continue;
          const float* gr = ch->grads() + v.offset;
          place_shard(out.grads[v.name], std::vector<float>(gr, gr + v.numel()), v,
                      v.expert_parallel ? at.ep : at.tp);
        }
      }
    }
    for (size_t i = 0; i < net.size(); ++i) {
      opt[i]->step(net[i]->params(), net[i]->grads(), 1e-2f);
      net[i]->zero_grads();
    }
  }
}

/// The grid on threads of this process (in-process groups).
inline GridRun run_ep_cp_local(const meshplan::ModelSpec& model, const Grid& g, int64_t B,
                               int64_t T, int M, int steps, const std::vector<int32_t>& tokens) {
  using namespace meshplan::exec;
  const int W = g.world();
  std::vector<RankComms> comms(W);
  std::vector<std::vector<std::unique_ptr<Communicator>>> keep;
  // Groups of ranks that share all coordinates but the ones `varies` says.
  auto build = [&](auto key_of, auto rank_in, int size, Communicator* RankComms::*slot) {
    std::map<int, std::vector<int>> members;
    for (int w = 0; w < W; ++w) members[key_of(grid_coord(g, w))].push_back(w);
    for (auto& [key, ranks] : members) {
      keep.push_back(make_local_group(size));
      for (int w : ranks) comms[w].*slot = keep.back()[rank_in(grid_coord(g, w))].get();
    }
  };
  build([&](GridCoord a) { return a.cp + g.cp * a.ep; }, [](GridCoord a) { return a.tp; }, g.tp, &RankComms::tp);
  build([&](GridCoord a) { return a.tp + g.tp * a.ep; }, [](GridCoord a) { return a.cp; }, g.cp, &RankComms::cp);
  build([&](GridCoord a) { return a.tp + g.tp * a.cp; }, [](GridCoord a) { return a.ep; }, g.ep, &RankComms::ep);
  build([](GridCoord a) { return a.tp; }, [&](GridCoord a) { return a.cp + g.cp * a.ep; }, g.ep * g.cp,
        &RankComms::data);
  GridRun out;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w) {
    threads.emplace_back([&, w] { train_ep_cp_rank(model, g, w, comms[w], B, T, M, steps, tokens, out, mu); });
  }
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace exec_test
