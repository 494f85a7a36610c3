// DataParallelChunk: construction, hooks, gradient buckets and reduce-scatters (see the header for
// what each ZeRO stage holds). Parameter gathers, the optimizer and checkpoint state are in
// data_parallel_params.cpp.
#include "executor/parallel/data_parallel.h"

#include <cassert>

namespace meshplan::exec {

struct DataParallelChunk::InFlight {
  CommRequest request;
  Communicator* comm = nullptr;  // the group the reduction runs on (DP or expert DP)
  int block = -1;     // ZeRO >= 1: piece whose gradients are being reduce-scattered
  Tensor input;       // padded gradients (staging copy or the block's live buffer)
  Tensor output;      // ZeRO-2/3: this rank's reduced piece, added into grad_shard_ on completion
};

DataParallelChunk::DataParallelChunk(Backend& backend, const ChunkSpec& spec, const TpContext& tp,
                                     Communicator& dp, const DataParallelOptions& options,
                                     EpCpGroups groups, Communicator* edp)
    : backend_(backend), dp_(dp), edp_(edp), options_(options) {
  assert(options.zero_stage >= 0 && options.zero_stage <= 3);
  assert((edp == nullptr || options.zero_stage <= 1) && "ZeRO-2/3 shard whole blocks over dp");
  ChunkSpec s = spec;
  s.allocate_params = options.zero_stage < 3;
  s.allocate_grads = options.zero_stage < 2;
  model_ = std::make_unique<ModelChunk>(backend, s, tp, make_hooks(), groups);
  shards_ = edp ? make_shard_layout(model_->layout(), dp.rank(), dp.size(), edp->rank(), edp->size())
              : make_shard_layout(model_->layout(), dp.rank(), dp.size());
  const size_t blocks = model_->blocks().size();
  pieces_.assign(blocks, {});
  for (size_t i = 0; i < shards_.blocks.size(); ++i) pieces_[shards_.blocks[i].block].push_back(static_cast<int>(i));
  issued_.assign(blocks, false);
  live_grads_.resize(blocks);
  gathered_.resize(blocks);
  init_master();
  std::vector<FlatSegment> segments = options.zero_stage == 0
                                          ? flat_segments(model_->layout(), 0, model_->num_params())
                                          : shard_segments(model_->layout(), shards_);
  adamw_ = std::make_unique<AdamW>(backend, master_.numel(), std::move(segments), options.adamw);
}

DataParallelChunk::~DataParallelChunk() { complete_until(0); }

ChunkHooks DataParallelChunk::make_hooks() {
  ChunkHooks h;
  h.grads_ready = [this](int block) { on_grads_ready(block); };
  if (options_.zero_stage >= 2) h.grad_buffer = [this](int block) { return grad_buffer(block); };
  if (options_.zero_stage >= 3) {
    h.gather_params = [this](int block, Pass pass) { return gather_params(block, pass); };
    h.release_params = [this](int block, Pass pass) { release_params(block, pass); };
  }
  return h;
}

void DataParallelChunk::init_master() {
  const int64_t p = model_->num_params();
  if (options_.zero_stage == 0) {
    master_ = Tensor(backend_, DType::F32, {p});
    backend_.copy(master_.data(), model_->params(), static_cast<uint64_t>(p) * 4);
    return;
  }
  master_ = Tensor(backend_, DType::F32, {shards_.total});
  backend_.fill(master_.f32(), 0.0f, shards_.total);
  for (const BlockShard& b : shards_.blocks) {
    if (b.own_count == 0) continue;
    float* dst = master_.f32() + b.shard_offset;
    if (options_.zero_stage < 3) {
      backend_.copy(dst, model_->params() + b.offset + b.own_begin, static_cast<uint64_t>(b.own_count) * 4);
    } else {
      model_->init_params(dst, b.offset + b.own_begin, b.own_count);
    }
  }
  grad_shard_ = Tensor(backend_, DType::F32, {shards_.total});
  backend_.fill(grad_shard_.f32(), 0.0f, shards_.total);
  if (options_.zero_stage == 3) {
    param_shard_ = Tensor(backend_, DType::F32, {shards_.total});
    backend_.copy(param_shard_.data(), master_.data(), master_.bytes());
  }
}

void DataParallelChunk::begin_step() {
  complete_until(0);
  model_->zero_grads();
  if (!grad_shard_.empty()) backend_.fill(grad_shard_.f32(), 0.0f, shards_.total);
  issued_.assign(issued_.size(), false);
  bucket_lo_ = bucket_hi_ = -1;
  for (Tensor& t : live_grads_) t.reset();
}

// ---- gradient reductions ----

void DataParallelChunk::on_grads_ready(int block) {
  // MPI progresses non-blocking collectives only inside MPI calls: poke the ones in flight so
  // earlier buckets move while backward computes the next block.
  for (auto& f : in_flight_) f->comm->test(f->request);
  if (options_.zero_stage >= 2) {
    // Every micro-batch: reduce-scatter this block's fresh gradients and drop the full buffer.
    if (!live_grads_[block].empty()) issue_reduce_scatter(block, nullptr);
    return;
  }
  if (!options_.overlap || issued_[block]) return;
  issued_[block] = true;
  const std::vector<int>& pieces = pieces_[block];
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {  // backward order: experts first
    const BlockShard& b = shards_.blocks[*it];
    if (options_.zero_stage == 1) {
      issue_reduce_scatter(*it, model_->grads() + b.offset);
    } else if (b.expert) {  // ZeRO-0 expert piece: its own all-reduce over the expert DP group
      auto f = std::make_unique<InFlight>();
      f->comm = edp_;
      f->request = edp_->iall_reduce(model_->grads() + b.offset, b.count, ReduceOp::Sum);
      in_flight_.push_back(std::move(f));
    } else {
      add_to_bucket(b);
    }
  }
}

// ZeRO-0: blocks arrive in reverse order (head, layers, embedding); grow the bucket downwards.
void DataParallelChunk::add_to_bucket(const BlockShard& b) {
  if (bucket_lo_ >= 0 && b.offset + b.count != bucket_lo_) issue_bucket();
  if (bucket_lo_ < 0) bucket_hi_ = b.offset + b.count;
  bucket_lo_ = b.offset;
  if ((bucket_hi_ - bucket_lo_) * 4 >= options_.bucket_bytes) issue_bucket();
}

void DataParallelChunk::issue_bucket() {
  if (bucket_lo_ < 0) return;
  auto f = std::make_unique<InFlight>();
  f->comm = &dp_;
  f->request = dp_.iall_reduce(model_->grads() + bucket_lo_, bucket_hi_ - bucket_lo_, ReduceOp::Sum);
  in_flight_.push_back(std::move(f));
  bucket_lo_ = bucket_hi_ = -1;
}

// block: a piece of shards_ (the block itself without edp_). block_grads: ZeRO-1 the piece in the
// full gradient buffer; ZeRO-2/3 nullptr (live buffer).
void DataParallelChunk::issue_reduce_scatter(int block, const float* block_grads) {
  const BlockShard& b = shards_.blocks[block];
  auto f = std::make_unique<InFlight>();
  f->block = block;
  const float* in = block_grads;
  if (options_.zero_stage >= 2) {
    f->input = std::move(live_grads_[block]);  // already padded with zeros
    in = f->input.f32();
    f->output = Tensor(backend_, DType::F32, {b.shard_size});
  } else if (b.padded() != b.count) {
    f->input = Tensor(backend_, DType::F32, {b.padded()});
    backend_.fill(f->input.f32() + b.count, 0.0f, b.padded() - b.count);
    backend_.copy(f->input.data(), block_grads, static_cast<uint64_t>(b.count) * 4);
    in = f->input.f32();
  }
  float* out = options_.zero_stage >= 2 ? f->output.f32() : grad_shard_.f32() + b.shard_offset;
  f->comm = &comm_of(b);
  f->request = f->comm->ireduce_scatter_sum(in, out, b.shard_size);
  in_flight_.push_back(std::move(f));
}

void DataParallelChunk::complete(InFlight& f) {
  f.comm->wait(f.request);
  if (!f.output.empty()) {
    const BlockShard& b = shards_.blocks[f.block];
    backend_.axpy(grad_shard_.f32() + b.shard_offset, 1.0f, f.output.f32(), b.shard_size);
  }
}

void DataParallelChunk::complete_until(size_t max_pending) {
  while (in_flight_.size() > max_pending) {
    complete(*in_flight_.front());
    in_flight_.pop_front();
  }
}

float* DataParallelChunk::grad_buffer(int block) {
  Tensor& live = live_grads_[block];
  if (live.empty()) {
    complete_until(2);  // bounds the gradient bytes held while backward runs
    const BlockShard& b = shards_.blocks[block];
    live = Tensor(backend_, DType::F32, {b.padded()});
    backend_.fill(live.f32(), 0.0f, b.padded());
  }
  return live.f32();
}

void DataParallelChunk::issue_remaining() {
  const int blocks = static_cast<int>(pieces_.size());  // model blocks
  for (int block = blocks - 1; block >= 0; --block) {
    if (options_.zero_stage >= 2) {
      if (!live_grads_[block].empty()) issue_reduce_scatter(block, nullptr);
      continue;
    }
    if (issued_[block]) continue;
    const bool overlap = options_.overlap;
    options_.overlap = true;  // reuse the hook's bucketing for the blocks not yet started
    on_grads_ready(block);
    options_.overlap = overlap;
  }
  issue_bucket();
}

void DataParallelChunk::finish_reductions() {
  issue_remaining();
  complete_until(0);
}

GradRange DataParallelChunk::optimizer_grads() {
  GradRange r;
  if (options_.zero_stage == 0) {
    r.grads = model_->grads();
    r.segments = flat_segments(model_->layout(), 0, model_->num_params());
  } else {
    r.grads = grad_shard_.f32();
    r.segments = shard_segments(model_->layout(), shards_);
  }
  return r;
}

}  // namespace meshplan::exec
