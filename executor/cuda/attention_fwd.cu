// Causal GQA attention forward, flash style: each block holds 32 query rows of one (b, h) and
// streams keys/values in tiles of 32 through shared memory with an online softmax, so no (T, T)
// matrix exists unless the caller asks for probs (written in a second sweep from the final lse).
// Layout: q, out (B, T, NH, D); k, v (B, T, NKV, D); lse (B, NH, T); probs (B, NH, T, T).
#include "executor/cuda/attention_common.cuh"
#include "executor/cuda/launch.h"

namespace meshplan::exec::cuda {

namespace {

struct FwdArgs {
  float* out;
  float* lse;
  float* probs;
  const float* q;
  const float* k;
  const float* v;
  int64_t T, NH, NKV, D;
  float scale;
};

// Shared memory: Qs (32, D) | Ks (32, D + 1) padded so lane-per-key reads of a column hit 32
// different banks | Vs (32, D).
size_t fwd_shared_bytes(int64_t D) { return sizeof(float) * (kAttnRows * D + kAttnTile * (D + 1) + kAttnTile * D); }

// Warp w owns query rows row0 + w*4 + r; lane L is key j0 + L of the current tile and holds dims
// d = L + 32 i of the output accumulators.
template <int DPL>
__global__ void __launch_bounds__(kAttnWarps * 32) attention_fwd_kernel(FwdArgs a) {
  extern __shared__ float smem[];
  const int64_t D = a.D, T = a.T;
  float* Qs = smem;
  float* Ks = Qs + kAttnRows * D;
  float* Vs = Ks + kAttnTile * (D + 1);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t bh = blockIdx.y, b = bh / a.NH, h = bh % a.NH;
  const int64_t g = h / (a.NH / a.NKV);
  // Later query tiles have more keys: launch them first (reverse order) for load balance.
  const int64_t row0 = (static_cast<int64_t>(gridDim.x) - 1 - blockIdx.x) * kAttnRows;
  const int64_t last_row = row0 + kAttnRows - 1 < T - 1 ? row0 + kAttnRows - 1 : T - 1;

  for (int64_t i = threadIdx.x; i < kAttnRows * D; i += blockDim.x) {
    const int64_t r = i / D, d = i - r * D, t = row0 + r;
    Qs[i] = t < T ? a.q[bthd(b, t, h, T, a.NH, D) + d] : 0.0f;
  }

  float o[kAttnRowsPerWarp][DPL];
  float m[kAttnRowsPerWarp], l[kAttnRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kAttnRowsPerWarp; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int i = 0; i < DPL; ++i) o[r][i] = 0.0f;
  }
  const int64_t my_row0 = row0 + warp * kAttnRowsPerWarp;

  for (int64_t j0 = 0; j0 <= last_row; j0 += kAttnTile) {
    __syncthreads();  // previous tile fully consumed (and Qs written, first time)
    for (int64_t i = threadIdx.x; i < kAttnTile * D; i += blockDim.x) {
      const int64_t jj = i / D, d = i - jj * D, j = j0 + jj;
      const bool ok = j < T;
      Ks[jj * (D + 1) + d] = ok ? a.k[bthd(b, j, g, T, a.NKV, D) + d] : 0.0f;
      Vs[jj * D + d] = ok ? a.v[bthd(b, j, g, T, a.NKV, D) + d] : 0.0f;
    }
    __syncthreads();
    if (my_row0 >= T || j0 > my_row0 + kAttnRowsPerWarp - 1) continue;  // warp-uniform: no key here

    // Scores of this lane's key against the warp's 4 rows.
    float s[kAttnRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kAttnRowsPerWarp; ++r) s[r] = 0.0f;
    const float* kr = Ks + lane * (D + 1);
    const float* qw = Qs + (warp * kAttnRowsPerWarp) * D;
    for (int64_t d = 0; d < D; ++d) {
      const float kd = kr[d];
#pragma unroll
      for (int r = 0; r < kAttnRowsPerWarp; ++r) s[r] += qw[r * D + d] * kd;
    }
    const int64_t j = j0 + lane;
    float p[kAttnRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kAttnRowsPerWarp; ++r) {
      const int64_t t = my_row0 + r;
      const float sr = (t < T && j <= t) ? s[r] * a.scale : -INFINITY;
      const float tile_max = warp_max(sr);
      if (tile_max == -INFINITY) {  // no valid key of this tile for row r (warp-uniform)
        p[r] = 0.0f;
        continue;
      }
      const float m_new = fmaxf(m[r], tile_max);
      const float corr = expf(m[r] - m_new);  // 0 on the first valid tile (m = -inf)
      p[r] = expf(sr - m_new);
      l[r] = l[r] * corr + warp_sum(p[r]);
      m[r] = m_new;
#pragma unroll
      for (int i = 0; i < DPL; ++i) o[r][i] *= corr;
    }
    // o[r][d] += sum over the tile's keys jj of p_jj * V[jj][d]; p_jj lives in lane jj.
    for (int jj = 0; jj < kAttnTile; ++jj) {
      float pj[kAttnRowsPerWarp];
#pragma unroll
      for (int r = 0; r < kAttnRowsPerWarp; ++r) pj[r] = __shfl_sync(0xffffffffu, p[r], jj);
#pragma unroll
      for (int i = 0; i < DPL; ++i) {
        const int64_t d = lane + 32 * i;
        if (d < D) {
          const float vd = Vs[jj * D + d];
#pragma unroll
          for (int r = 0; r < kAttnRowsPerWarp; ++r) o[r][i] += pj[r] * vd;
        }
      }
    }
  }

  // Normalise and write out, lse.
#pragma unroll
  for (int r = 0; r < kAttnRowsPerWarp; ++r) {
    const int64_t t = my_row0 + r;
    if (t >= T) continue;
    const float inv_l = 1.0f / l[r];
    float* ot = a.out + bthd(b, t, h, T, a.NH, D);
#pragma unroll
    for (int i = 0; i < DPL; ++i) {
      const int64_t d = lane + 32 * i;
      if (d < D) ot[d] = o[r][i] * inv_l;
    }
    m[r] = m[r] + logf(l[r]);  // m now holds the row's lse
    if (lane == 0) a.lse[bh * T + t] = m[r];
  }
  if (a.probs == nullptr) return;  // block-uniform

  // Second sweep: probs[t][j] = exp(s - lse) for j <= t, else 0; lanes write consecutive j.
  const int64_t tiles = (T + kAttnTile - 1) / kAttnTile;
  for (int64_t jt = 0; jt < tiles; ++jt) {
    const int64_t j0 = jt * kAttnTile, j = j0 + lane;
    const bool need_keys = j0 <= last_row;  // block-uniform
    if (need_keys) {
      __syncthreads();
      for (int64_t i = threadIdx.x; i < kAttnTile * D; i += blockDim.x) {
        const int64_t jj = i / D, d = i - jj * D;
        Ks[jj * (D + 1) + d] = j0 + jj < T ? a.k[bthd(b, j0 + jj, g, T, a.NKV, D) + d] : 0.0f;
      }
      __syncthreads();
    }
    float s[kAttnRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kAttnRowsPerWarp; ++r) s[r] = 0.0f;
    if (need_keys) {
      const float* kr = Ks + lane * (D + 1);
      const float* qw = Qs + (warp * kAttnRowsPerWarp) * D;
      for (int64_t d = 0; d < D; ++d) {
        const float kd = kr[d];
#pragma unroll
        for (int r = 0; r < kAttnRowsPerWarp; ++r) s[r] += qw[r * D + d] * kd;
      }
    }
#pragma unroll
    for (int r = 0; r < kAttnRowsPerWarp; ++r) {
      const int64_t t = my_row0 + r;
      if (t >= T || j >= T) continue;
      a.probs[(bh * T + t) * T + j] = j <= t ? expf(s[r] * a.scale - m[r]) : 0.0f;
    }
  }
}

template <int DPL>
void launch_fwd(cudaStream_t s, const FwdArgs& a, int64_t B) {
  const size_t shared = fwd_shared_bytes(a.D);
  allow_shared_bytes(attention_fwd_kernel<DPL>, shared);
  const dim3 grid(static_cast<unsigned>((a.T + kAttnRows - 1) / kAttnRows), static_cast<unsigned>(B * a.NH));
  attention_fwd_kernel<DPL><<<grid, kAttnWarps * 32, shared, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void attention_forward(cudaStream_t s, float* out, float* lse, float* probs, const float* q,
                       const float* k, const float* v, const AttentionDims& d) {
  if (d.B * d.T * d.NH == 0) return;
  assert(d.NKV > 0 && d.NH % d.NKV == 0 && d.D <= kMaxHeadDim);
  check_grid_heads(d);
  const FwdArgs a{out, lse, probs, q, k, v, d.T, d.NH, d.NKV, d.D,
                  1.0f / sqrtf(static_cast<float>(d.D))};
  switch (dims_per_lane(d.D)) {
    case 1: launch_fwd<1>(s, a, d.B); break;
    case 2: launch_fwd<2>(s, a, d.B); break;
    case 4: launch_fwd<4>(s, a, d.B); break;
    default: launch_fwd<8>(s, a, d.B); break;
  }
}

}  // namespace meshplan::exec::cuda
