// Ring attention over the CP group: K/V blocks travel rank r -> r+1 while each rank attends its
// queries to the block it holds (forward: online-softmax merge; backward: dK/dV accumulators
// travel with their block and arrive home after cp hops). Host buffers through the Backend.
#include <cassert>
#include <vector>

#include "executor/parallel/context_parallel.h"
#include "executor/parallel/context_parallel_block.h"

namespace meshplan::exec {

namespace {

constexpr int kRingTag = 31000;  // below MPI's smallest TAG_UB (32767), apart from the pipeline's

CpBlockDims block_dims(const AttentionDims& d, int cp) {
  return CpBlockDims{d.B, d.T / cp, d.NH, d.NKV, d.D};
}

// Global chunk index of local chunk `local` (0 or 1) of CP rank `rank`.
int global_chunk(int local, int rank, int cp) { return local == 0 ? rank : 2 * cp - 1 - rank; }

// Calls fn(qc, kc, diagonal) for each local query chunk qc that sees key/value chunk kc of rank
// `src` under the causal mask.
template <class Fn>
void for_each_visible(int rank, int src, int cp, Fn fn) {
  for (int qc = 0; qc < 2; ++qc) {
    for (int kc = 0; kc < 2; ++kc) {
      const int gq = global_chunk(qc, rank, cp), gk = global_chunk(kc, src, cp);
      if (gk <= gq) fn(qc, kc, gk == gq);
    }
  }
}

std::vector<float> to_host(Backend& be, const float* p, int64_t n) {
  std::vector<float> h(static_cast<size_t>(n));
  be.copy_to_host(h.data(), p, static_cast<uint64_t>(n) * 4);
  return h;
}

// Sends `buf` to the next rank and receives the previous rank's into `buf`.
void ring_shift(const GroupContext& cp, std::vector<float>& buf, int step) {
  std::vector<float> next(buf.size());
  const int n = static_cast<int>(buf.size());
  CommRequest s = cp.group->isend(buf.data(), n, (cp.rank + 1) % cp.size, kRingTag + step);
  cp.group->recv(next.data(), n, (cp.rank + cp.size - 1) % cp.size, kRingTag + step);
  cp.group->wait(s);
  buf.swap(next);
}

}  // namespace

void cp_attention_forward(Backend& be, const GroupContext& cp, float* out, float* lse,
                          const float* q, const float* k, const float* v, const AttentionDims& d) {
  assert(cp.active() && d.T % (2 * cp.size) == 0);
  const CpBlockDims bd = block_dims(d, cp.size);
  const int64_t nq = bd.B * bd.Tl * bd.NH * bd.D, nkv = bd.B * bd.Tl * bd.NKV * bd.D;
  const std::vector<float> qh = to_host(be, q, nq);
  std::vector<float> kv(static_cast<size_t>(2 * nkv));  // [k | v] of the block held now
  be.copy_to_host(kv.data(), k, static_cast<uint64_t>(nkv) * 4);
  be.copy_to_host(kv.data() + nkv, v, static_cast<uint64_t>(nkv) * 4);
  OnlineSoftmax acc(bd);
  for (int step = 0; step < cp.size; ++step) {
    const int src = (cp.rank + cp.size - step) % cp.size;
    for_each_visible(cp.rank, src, cp.size, [&](int qc, int kc, bool diagonal) {
      cp_block_forward(bd, qh.data(), kv.data(), kv.data() + nkv, qc, kc, diagonal, acc);
    });
    if (step + 1 < cp.size) ring_shift(cp, kv, step);
  }
  std::vector<float> oh(static_cast<size_t>(nq)), lh(static_cast<size_t>(bd.B * bd.NH * bd.Tl));
  acc.finish(bd, oh.data(), lh.data());
  be.copy_from_host(out, oh.data(), oh.size() * 4);
  be.copy_from_host(lse, lh.data(), lh.size() * 4);
}

void cp_attention_backward(Backend& be, const GroupContext& cp, float* dq, float* dk, float* dv,
                           const float* dout, const float* q, const float* k, const float* v,
                           const float* out, const float* lse, const AttentionDims& d) {
  assert(cp.active() && d.T % (2 * cp.size) == 0);
  const CpBlockDims bd = block_dims(d, cp.size);
  const int64_t nq = bd.B * bd.Tl * bd.NH * bd.D, nkv = bd.B * bd.Tl * bd.NKV * bd.D;
  const int64_t rows = bd.B * bd.NH * bd.Tl;
  const std::vector<float> qh = to_host(be, q, nq), doh = to_host(be, dout, nq);
  const std::vector<float> oh = to_host(be, out, nq), lh = to_host(be, lse, rows);
  std::vector<double> delta(static_cast<size_t>(rows));  // rowsum(dout * out) of the final output
  for (int64_t b = 0; b < bd.B; ++b) {
    for (int64_t h = 0; h < bd.NH; ++h) {
      for (int64_t t = 0; t < bd.Tl; ++t) {
        const int64_t off = ((b * bd.Tl + t) * bd.NH + h) * bd.D;
        double s = 0;
        for (int64_t x = 0; x < bd.D; ++x) s += static_cast<double>(doh[off + x]) * oh[off + x];
        delta[(b * bd.NH + h) * bd.Tl + t] = s;
      }
    }
  }
  std::vector<float> buf(static_cast<size_t>(4 * nkv), 0.0f);  // [k | v | dk | dv] travelling
  be.copy_to_host(buf.data(), k, static_cast<uint64_t>(nkv) * 4);
  be.copy_to_host(buf.data() + nkv, v, static_cast<uint64_t>(nkv) * 4);
  std::vector<double> dqh(static_cast<size_t>(nq), 0.0);
  for (int step = 0; step < cp.size; ++step) {
    const int src = (cp.rank + cp.size - step) % cp.size;
    for_each_visible(cp.rank, src, cp.size, [&](int qc, int kc, bool diagonal) {
      cp_block_backward(bd, qh.data(), buf.data(), buf.data() + nkv, doh.data(), lh.data(), delta,
                        qc, kc, diagonal, dqh, buf.data() + 2 * nkv, buf.data() + 3 * nkv);
    });
    ring_shift(cp, buf, cp.size + step);  // the last shift brings each block's dK/dV home
  }
  std::vector<float> dqf(dqh.begin(), dqh.end());
  be.copy_from_host(dq, dqf.data(), dqf.size() * 4);
  be.copy_from_host(dk, buf.data() + 2 * nkv, static_cast<uint64_t>(nkv) * 4);
  be.copy_from_host(dv, buf.data() + 3 * nkv, static_cast<uint64_t>(nkv) * 4);
}

}  // namespace meshplan::exec
