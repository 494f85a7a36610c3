// The pipeline interpreter: one pass over this rank's action list per training step.
#include "executor/pipeline/pipeline_runner.h"

#include <cassert>

namespace meshplan::exec {

PipelineRunner::PipelineRunner(Backend& backend, Communicator& pp, const Schedule& schedule,
                               int pp_rank, std::vector<DataParallelChunk*> chunks, float loss_scale)
    : backend_(backend), pp_(pp), schedule_(schedule), pp_rank_(pp_rank), pp_size_(schedule.pp),
      model_chunks_(schedule.pp * schedule.virtual_stages), chunks_(std::move(chunks)),
      loss_scale_(loss_scale) {
  assert(static_cast<int>(chunks_.size()) == schedule.virtual_stages);
  assert(pp.size() == schedule.pp && pp.rank() == pp_rank);
  last_backward_mb_.assign(chunks_.size(), -1);
  for (const Action& a : schedule.ranks[pp_rank])
    if (a.kind == ActionKind::Backward) last_backward_mb_[a.chunk] = a.micro_batch;
}

int PipelineRunner::local_of(int g) const {
  if (g < 0 || g >= model_chunks_ || chunk_rank(schedule_.kind, pp_size_, g) != pp_rank_) return -1;
  return chunk_local_index(schedule_.kind, pp_size_, g);
}

int PipelineRunner::tag(int mb, int receiving_model_chunk, int kind) const {
  return (mb * model_chunks_ + receiving_model_chunk) * 2 + kind;
}

const std::vector<int32_t>& PipelineRunner::tokens(int mb, bool targets, const MicroBatchLoader& load) {
  auto it = batches_.find(mb);
  if (it == batches_.end()) {
    const ChunkSpec& s = chunks_[0]->model().spec();
    const size_t n = static_cast<size_t>(s.micro_batch_size * s.seq_len);
    auto& entry = batches_[mb];
    entry.first.resize(n);
    entry.second.resize(n);
    load(mb, entry.first.data(), entry.second.data());
    it = batches_.find(mb);
  }
  return targets ? it->second.second : it->second.first;
}

void PipelineRunner::receive(const Action& a, std::map<Key, Tensor>& into, int kind) {
  ModelChunk& m = chunks_[a.chunk]->model();
  Tensor buffer(backend_, DType::F32, {m.activation_rows(), m.spec().model.hidden_size});
  pp_.recv(buffer.f32(), buffer.numel(), a.peer, tag(a.micro_batch, model_chunk(a.chunk), kind));
  into[{a.micro_batch, a.chunk}] = std::move(buffer);
}

void PipelineRunner::forward(const Action& a, const MicroBatchLoader& load, double& loss_sum) {
  ModelChunk& m = chunks_[a.chunk]->model();
  const Key key{a.micro_batch, a.chunk};
  MicroBatchInput in;
  if (m.spec().has_embedding) in.tokens = tokens(a.micro_batch, false, load).data();
  if (m.spec().has_head) in.targets = tokens(a.micro_batch, true, load).data();
  auto received = recv_activations_.find(key);
  // At a V's turn the previous model chunk is this rank's other chunk: its output is the input.
  const int prev_local = m.spec().has_embedding ? -1 : local_of(model_chunk(a.chunk) - 1);
  const Key prev_key{a.micro_batch, prev_local};
  if (prev_local >= 0) {
    assert(outputs_.count(prev_key) && "F before the other local chunk's F");
    in.activations = outputs_[prev_key];
  } else if (!m.spec().has_embedding) {
    assert(received != recv_activations_.end() && "F before its RF");
    in.activations = received->second.f32();
  }
  const float* out = m.forward(a.micro_batch, in);
  if (received != recv_activations_.end()) recv_activations_.erase(received);  // forward copied it
  if (prev_local >= 0) {  // copied as well: the other chunk's output is no longer needed
    chunks_[prev_local]->model().release_output(a.micro_batch);
    outputs_.erase(prev_key);
  }
  if (m.spec().has_head) loss_sum += m.loss(a.micro_batch);
  else outputs_[key] = out;
}

void PipelineRunner::backward(const Action& a) {
  DataParallelChunk& dpc = *chunks_[a.chunk];
  ModelChunk& m = dpc.model();
  const Key key{a.micro_batch, a.chunk};
  // The forward output must have left before backward frees it; its receiver consumed it before
  // sending the gradient this backward received, so this wait cannot block for long.
  auto send = output_sends_.find(key);
  if (send != output_sends_.end()) {
    pp_.wait(send->second);
    output_sends_.erase(send);
    m.release_output(a.micro_batch);
  }
  outputs_.erase(key);
  const float* grad_output = nullptr;
  auto received = recv_gradients_.find(key);
  // At a V's turn the next model chunk is this rank's other chunk: its input gradient is ours.
  const int next_local = m.spec().has_head ? -1 : local_of(model_chunk(a.chunk) + 1);
  Tensor local_gradient;
  if (next_local >= 0) {
    auto it = grad_inputs_.find({a.micro_batch, next_local});
    assert(it != grad_inputs_.end() && "B before the other local chunk's B");
    local_gradient = std::move(it->second);
    grad_inputs_.erase(it);
    grad_output = local_gradient.f32();
  } else if (!m.spec().has_head) {
    assert(received != recv_gradients_.end() && "B before its RB");
    grad_output = received->second.f32();
  }
  BackwardOptions opt;
  opt.loss_scale = loss_scale_;
  opt.grads_final = a.micro_batch == last_backward_mb_[a.chunk] || dpc.reduce_every_micro_batch();
  const float* grad_input = m.backward(a.micro_batch, grad_output, opt);
  if (received != recv_gradients_.end()) recv_gradients_.erase(received);
  if (grad_input != nullptr) {
    // Valid only until the next backward: keep a copy for the (non-blocking) send.
    Tensor copy(backend_, DType::F32, {m.activation_rows(), m.spec().model.hidden_size});
    backend_.copy(copy.data(), grad_input, copy.bytes());
    grad_inputs_[key] = std::move(copy);
  }
}

// Frees send buffers (and forward outputs) whose messages have left, without blocking.
void PipelineRunner::release_completed_sends() {
  for (auto it = output_sends_.begin(); it != output_sends_.end();) {
    if (!pp_.test(it->second)) {
      ++it;
      continue;
    }
    chunks_[it->first.second]->model().release_output(it->first.first);
    outputs_.erase(it->first);
    it = output_sends_.erase(it);
  }
  for (auto it = gradient_sends_.begin(); it != gradient_sends_.end();) {
    it = pp_.test(it->first) ? gradient_sends_.erase(it) : it + 1;
  }
}

double PipelineRunner::run_step(const MicroBatchLoader& load) {
  double loss_sum = 0;
  for (const Action& a : schedule_.ranks[pp_rank_]) {
    const Key key{a.micro_batch, a.chunk};
    release_completed_sends();
    switch (a.kind) {
      case ActionKind::Forward: forward(a, load, loss_sum); break;
      case ActionKind::Backward: backward(a); break;
      case ActionKind::BackwardWeight: break;  // computed by B (see the class comment)
      case ActionKind::RecvForward: receive(a, recv_activations_, 0); break;
      case ActionKind::RecvBackward: receive(a, recv_gradients_, 1); break;
      case ActionKind::SendForward: {
        ModelChunk& m = chunks_[a.chunk]->model();
        assert(outputs_.count(key) && "SF before its F");
        output_sends_[key] = pp_.isend(outputs_[key], m.activation_numel(), a.peer,
                                       tag(a.micro_batch, model_chunk(a.chunk) + 1, 0));
        break;
      }
      case ActionKind::SendBackward: {
        auto it = grad_inputs_.find(key);
        assert(it != grad_inputs_.end() && "SB before its B");
        CommRequest r = pp_.isend(it->second.f32(), it->second.numel(), a.peer,
                                  tag(a.micro_batch, model_chunk(a.chunk) - 1, 1));
        gradient_sends_.emplace_back(r, std::move(it->second));
        grad_inputs_.erase(it);
        break;
      }
      case ActionKind::ReduceGrads: chunks_[a.chunk]->issue_remaining(); break;
      case ActionKind::OptimizerStep: break;  // the trainer runs it after every R has finished
    }
  }
  for (auto& s : output_sends_) pp_.wait(s.second);
  for (auto& s : gradient_sends_) pp_.wait(s.first);
  assert(recv_activations_.empty() && recv_gradients_.empty() && grad_inputs_.empty());
  output_sends_.clear();
  gradient_sends_.clear();
  outputs_.clear();
  batches_.clear();
  return loss_sum;
}

}  // namespace meshplan::exec
