// DataParallelChunk: ZeRO-3 per-block parameter gathers, the optimizer step on the fp32 master
// weights and the refresh of the working parameters, and checkpoint state.
#include <cassert>
#include <cstring>

#include "executor/parallel/data_parallel.h"

namespace meshplan::exec {

const float* DataParallelChunk::gather_params(int block, Pass) {
  assert(options_.zero_stage == 3);
  const BlockShard& b = shards_.blocks[block];
  Tensor& full = gathered_[block];
  if (full.empty()) {
    full = Tensor(backend_, DType::F32, {b.padded()});
    dp_.all_gather(param_shard_.f32() + b.shard_offset, full.f32(), b.shard_size);
  }
  return full.f32();
}

void DataParallelChunk::release_params(int block, Pass) { gathered_[block].reset(); }

void DataParallelChunk::optimizer_step(float lr) {
  GradRange g = optimizer_grads();
  adamw_->step(master_.f32(), g.grads, lr);
  refresh_working_params();
}

void DataParallelChunk::refresh_working_params() {
  switch (options_.zero_stage) {
    case 0:
      backend_.copy(model_->params(), master_.data(), master_.bytes());
      return;
    case 3:
      backend_.copy(param_shard_.data(), master_.data(), master_.bytes());
      return;
    default:
      break;
  }
  // ZeRO-1/2: every DP rank contributes its updated piece of each block (non-blocking, all
  // blocks in flight together), unpadded blocks gathered straight into the working buffer; with
  // expert parallelism the expert pieces are gathered over the expert-data-parallel group.
  struct Gather {
    CommRequest request;
    Tensor staging;
    const BlockShard* block;
  };
  std::vector<Gather> gathers;
  gathers.reserve(shards_.blocks.size());
  for (const BlockShard& b : shards_.blocks) {
    Gather g{CommRequest{}, Tensor{}, &b};
    float* out = model_->params() + b.offset;
    if (b.padded() != b.count) {
      g.staging = Tensor(backend_, DType::F32, {b.padded()});
      out = g.staging.f32();
    }
    g.request = comm_of(b).iall_gather(master_.f32() + b.shard_offset, out, b.shard_size);
    gathers.push_back(std::move(g));
  }
  for (Gather& g : gathers) {
    comm_of(*g.block).wait(g.request);
    if (!g.staging.empty())
      backend_.copy(model_->params() + g.block->offset, g.staging.data(),
                    static_cast<uint64_t>(g.block->count) * 4);
  }
}

static Section tensor_section(Backend& backend, const std::string& name, const float* data, int64_t n) {
  std::vector<float> host(static_cast<size_t>(n));
  backend.copy_to_host(host.data(), data, static_cast<uint64_t>(n) * 4);
  return make_section(name, host.data(), host.size() * 4);
}

std::vector<Section> DataParallelChunk::state_sections(const std::string& prefix) {
  const int64_t n = master_.numel();
  const int64_t t = adamw_->step_count();
  return {tensor_section(backend_, prefix + "master", master_.f32(), n),
          tensor_section(backend_, prefix + "adam_m", adamw_->m(), n),
          tensor_section(backend_, prefix + "adam_v", adamw_->v(), n),
          make_section(prefix + "adam_t", &t, sizeof(t))};
}

Result<bool> DataParallelChunk::check_state(const std::vector<Section>& sections,
                                            const std::string& prefix, const std::string& file) const {
  for (const char* name : {"master", "adam_m", "adam_v"}) {
    const Section* s = find_section(sections, prefix + name);
    if (!s || s->bytes.size() != master_.bytes()) {
      return make_error(file, "checkpoint", prefix + name,
                        "section missing or of the wrong size for this plan",
                        "resume with the plan that wrote the checkpoint");
    }
  }
  const Section* t = find_section(sections, prefix + "adam_t");
  if (!t || t->bytes.size() != sizeof(int64_t))
    return make_error(file, "checkpoint", prefix + "adam_t", "section missing",
                      "resume with the plan that wrote the checkpoint");
  return true;
}

void DataParallelChunk::load_state(const std::vector<Section>& sections, const std::string& prefix) {
  float* targets[3] = {master_.f32(), adamw_->m(), adamw_->v()};
  const char* names[3] = {"master", "adam_m", "adam_v"};
  for (int i = 0; i < 3; ++i) {
    const Section* s = find_section(sections, prefix + names[i]);
    assert(s && s->bytes.size() == master_.bytes() && "check_state first");
    backend_.copy_from_host(targets[i], s->bytes.data(), master_.bytes());
  }
  int64_t steps = 0;
  std::memcpy(&steps, find_section(sections, prefix + "adam_t")->bytes.data(), sizeof(steps));
  adamw_->set_step_count(steps);
  refresh_working_params();
}

std::vector<float> DataParallelChunk::full_params_for_test() {
  const int64_t p = model_->num_params();
  std::vector<float> out(static_cast<size_t>(p));
  if (options_.zero_stage < 3) {
    backend_.copy_to_host(out.data(), model_->params(), static_cast<uint64_t>(p) * 4);
    return out;
  }
  for (size_t i = 0; i < shards_.blocks.size(); ++i) {
    const BlockShard& b = shards_.blocks[i];
    const float* full = gather_params(static_cast<int>(i), Pass::Forward);
    backend_.copy_to_host(out.data() + b.offset, full, static_cast<uint64_t>(b.count) * 4);
    release_params(static_cast<int>(i), Pass::Forward);
  }
  return out;
}

}  // namespace meshplan::exec
