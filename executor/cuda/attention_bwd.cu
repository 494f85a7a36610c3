// Causal GQA attention backward, flash style (the softmax is recomputed from q, k and lse; probs
// are never read), deterministic (no atomics), in two kernels:
//  1. dQ kernel, a block per 32 query rows of one (b, h): sweep 1 over key tiles computes
//     rowdot[t] = sum_j P[t, j] dP[t, j] (= dO[t] . O[t]); sweep 2 computes dS = P (dP - rowdot)
//     and dQ = scale dS K.
//  2. dK/dV kernel, a block per 32 key rows of one (b, kv head g): loops over the query heads of
//     the group and the query tiles at or after its keys; dV = P^T dO, dK = scale dS^T Q. Owning
//     every query head of its group, it writes dK and dV without accumulating across blocks.
// Layout as the forward: q, dq, dout (B, T, NH, D); k, v, dk, dv (B, T, NKV, D); lse (B, NH, T).
#include "executor/cuda/attention_common.cuh"
#include "executor/cuda/launch.h"

namespace meshplan::exec::cuda {

namespace {

struct BwdArgs {
  float* dq;
  float* dk;
  float* dv;
  float* rowdot;  // (B, NH, T) scratch: written by the dQ kernel, read by the dK/dV kernel
  const float* dout;
  const float* q;
  const float* k;
  const float* v;
  const float* lse;
  int64_t T, NH, NKV, D;
  float scale;
};

// dQ kernel shared memory: Qs, dOs (32, D) read by broadcast | Ks, Vs (32, D + 1) read lane-per-key.
size_t dq_shared_bytes(int64_t D) { return sizeof(float) * (2 * kAttnRows * D + 2 * kAttnTile * (D + 1)); }
// dK/dV kernel: Qs, dOs (32, D + 1) read lane-per-query | Ks, Vs (32, D) broadcast | lse, rowdot (32).
size_t dkv_shared_bytes(int64_t D) {
  return sizeof(float) * (2 * kAttnTile * (D + 1) + 2 * kAttnRows * D + 2 * kAttnTile);
}

// Scores and dP of this lane's streamed row against the warp's 4 rows:
//   s[r] = a_rows[r] . b_lane, dp[r] = c_rows[r] . d_lane (rows stride D, lane rows stride D + 1).
template <int R>
__device__ __forceinline__ void two_dots(const float* a_rows, const float* b_lane, const float* c_rows,
                                         const float* d_lane, int64_t D, float* s, float* dp) {
#pragma unroll
  for (int r = 0; r < R; ++r) s[r] = dp[r] = 0.0f;
  for (int64_t d = 0; d < D; ++d) {
    const float bd = b_lane[d], dd = d_lane[d];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      s[r] += a_rows[r * D + d] * bd;
      dp[r] += c_rows[r * D + d] * dd;
    }
  }
}

template <int DPL>
__global__ void __launch_bounds__(kAttnWarps * 32) attention_dq_kernel(BwdArgs a) {
  extern __shared__ float smem[];
  const int64_t D = a.D, T = a.T;
  float* Qs = smem;
  float* dOs = Qs + kAttnRows * D;
  float* Ks = dOs + kAttnRows * D;
  float* Vs = Ks + kAttnTile * (D + 1);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t bh = blockIdx.y, b = bh / a.NH, h = bh % a.NH;
  const int64_t g = h / (a.NH / a.NKV);
  const int64_t row0 = (static_cast<int64_t>(gridDim.x) - 1 - blockIdx.x) * kAttnRows;
  const int64_t last_row = row0 + kAttnRows - 1 < T - 1 ? row0 + kAttnRows - 1 : T - 1;
  const int64_t my_row0 = row0 + warp * kAttnRowsPerWarp;

  for (int64_t i = threadIdx.x; i < kAttnRows * D; i += blockDim.x) {
    const int64_t r = i / D, d = i - r * D, t = row0 + r;
    const bool ok = t < T;
    Qs[i] = ok ? a.q[bthd(b, t, h, T, a.NH, D) + d] : 0.0f;
    dOs[i] = ok ? a.dout[bthd(b, t, h, T, a.NH, D) + d] : 0.0f;
  }
  float lse[kAttnRowsPerWarp], rowdot[kAttnRowsPerWarp], dq[kAttnRowsPerWarp][DPL];
#pragma unroll
  for (int r = 0; r < kAttnRowsPerWarp; ++r) {
    const int64_t t = my_row0 + r;
    lse[r] = t < T ? a.lse[bh * T + t] : 0.0f;
    rowdot[r] = 0.0f;
#pragma unroll
    for (int i = 0; i < DPL; ++i) dq[r][i] = 0.0f;
  }
  const float* qw = Qs + warp * kAttnRowsPerWarp * D;
  const float* dow = dOs + warp * kAttnRowsPerWarp * D;

  for (int sweep = 0; sweep < 2; ++sweep) {
    for (int64_t j0 = 0; j0 <= last_row; j0 += kAttnTile) {
      __syncthreads();
      for (int64_t i = threadIdx.x; i < kAttnTile * D; i += blockDim.x) {
        const int64_t jj = i / D, d = i - jj * D, j = j0 + jj;
        const bool ok = j < T;
        Ks[jj * (D + 1) + d] = ok ? a.k[bthd(b, j, g, T, a.NKV, D) + d] : 0.0f;
        Vs[jj * (D + 1) + d] = ok ? a.v[bthd(b, j, g, T, a.NKV, D) + d] : 0.0f;
      }
      __syncthreads();
      if (my_row0 >= T || j0 > my_row0 + kAttnRowsPerWarp - 1) continue;  // warp-uniform
      float s[kAttnRowsPerWarp], dp[kAttnRowsPerWarp], ds[kAttnRowsPerWarp];
      two_dots<kAttnRowsPerWarp>(qw, Ks + lane * (D + 1), dow, Vs + lane * (D + 1), D, s, dp);
      const int64_t j = j0 + lane;
#pragma unroll
      for (int r = 0; r < kAttnRowsPerWarp; ++r) {
        const int64_t t = my_row0 + r;
        const float p = (t < T && j <= t) ? expf(s[r] * a.scale - lse[r]) : 0.0f;
        if (sweep == 0) rowdot[r] += p * dp[r];  // lane partial; reduced after the sweep
        ds[r] = p * (dp[r] - rowdot[r]);
      }
      if (sweep == 0) continue;
      for (int jj = 0; jj < kAttnTile; ++jj) {
        float dsj[kAttnRowsPerWarp];
#pragma unroll
        for (int r = 0; r < kAttnRowsPerWarp; ++r) dsj[r] = __shfl_sync(0xffffffffu, ds[r], jj);
#pragma unroll
        for (int i = 0; i < DPL; ++i) {
          const int64_t d = lane + 32 * i;
          if (d < D) {
            const float kd = Ks[jj * (D + 1) + d];
#pragma unroll
            for (int r = 0; r < kAttnRowsPerWarp; ++r) dq[r][i] += dsj[r] * kd;
          }
        }
      }
    }
    if (sweep == 0) {
#pragma unroll
      for (int r = 0; r < kAttnRowsPerWarp; ++r) rowdot[r] = warp_sum(rowdot[r]);
    }
  }

#pragma unroll
  for (int r = 0; r < kAttnRowsPerWarp; ++r) {
    const int64_t t = my_row0 + r;
    if (t >= T) continue;
    float* dqt = a.dq + bthd(b, t, h, T, a.NH, D);
#pragma unroll
    for (int i = 0; i < DPL; ++i) {
      const int64_t d = lane + 32 * i;
      if (d < D) dqt[d] = a.scale * dq[r][i];
    }
    if (lane == 0) a.rowdot[bh * T + t] = rowdot[r];
  }
}

// Warp w owns key rows key0 + w*4 + r of kv head g; lane L is query t0 + L of the current tile.
template <int DPL>
__global__ void __launch_bounds__(kAttnWarps * 32) attention_dkv_kernel(BwdArgs a) {
  extern __shared__ float smem[];
  const int64_t D = a.D, T = a.T;
  float* Qs = smem;
  float* dOs = Qs + kAttnTile * (D + 1);
  float* Ks = dOs + kAttnTile * (D + 1);
  float* Vs = Ks + kAttnRows * D;
  float* lse_s = Vs + kAttnRows * D;
  float* rowdot_s = lse_s + kAttnTile;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t bg = blockIdx.y, b = bg / a.NKV, g = bg % a.NKV;
  const int64_t rep = a.NH / a.NKV;
  // Early key tiles see the most queries: launch them first.
  const int64_t key0 = static_cast<int64_t>(blockIdx.x) * kAttnRows;
  const int64_t my_key0 = key0 + warp * kAttnRowsPerWarp;

  for (int64_t i = threadIdx.x; i < kAttnRows * D; i += blockDim.x) {
    const int64_t r = i / D, d = i - r * D, j = key0 + r;
    const bool ok = j < T;
    Ks[i] = ok ? a.k[bthd(b, j, g, T, a.NKV, D) + d] : 0.0f;
    Vs[i] = ok ? a.v[bthd(b, j, g, T, a.NKV, D) + d] : 0.0f;
  }
  float dk[kAttnRowsPerWarp][DPL], dv[kAttnRowsPerWarp][DPL];
#pragma unroll
  for (int r = 0; r < kAttnRowsPerWarp; ++r) {
#pragma unroll
    for (int i = 0; i < DPL; ++i) dk[r][i] = dv[r][i] = 0.0f;
  }
  const float* kw = Ks + warp * kAttnRowsPerWarp * D;
  const float* vw = Vs + warp * kAttnRowsPerWarp * D;

  for (int64_t hh = 0; hh < rep; ++hh) {
    const int64_t h = g * rep + hh, bh = b * a.NH + h;
    for (int64_t t0 = key0; t0 < T; t0 += kAttnTile) {  // queries t >= j only: tiles from key0
      __syncthreads();
      for (int64_t i = threadIdx.x; i < kAttnTile * D; i += blockDim.x) {
        const int64_t tt = i / D, d = i - tt * D, t = t0 + tt;
        const bool ok = t < T;
        Qs[tt * (D + 1) + d] = ok ? a.q[bthd(b, t, h, T, a.NH, D) + d] : 0.0f;
        dOs[tt * (D + 1) + d] = ok ? a.dout[bthd(b, t, h, T, a.NH, D) + d] : 0.0f;
      }
      if (threadIdx.x < kAttnTile) {
        const int64_t t = t0 + threadIdx.x;
        lse_s[threadIdx.x] = t < T ? a.lse[bh * T + t] : 0.0f;
        rowdot_s[threadIdx.x] = t < T ? a.rowdot[bh * T + t] : 0.0f;
      }
      __syncthreads();
      if (my_key0 >= T) continue;  // warp-uniform
      float s[kAttnRowsPerWarp], dp[kAttnRowsPerWarp], p[kAttnRowsPerWarp], ds[kAttnRowsPerWarp];
      // s[r] = k_r . q_lane, dp[r] = v_r . dO_lane (the same dot products as the dQ kernel).
      two_dots<kAttnRowsPerWarp>(kw, Qs + lane * (D + 1), vw, dOs + lane * (D + 1), D, s, dp);
      const int64_t t = t0 + lane;
#pragma unroll
      for (int r = 0; r < kAttnRowsPerWarp; ++r) {
        const int64_t j = my_key0 + r;
        p[r] = (t < T && j < T && j <= t) ? expf(s[r] * a.scale - lse_s[lane]) : 0.0f;
        ds[r] = p[r] * (dp[r] - rowdot_s[lane]);
      }
      for (int tt = 0; tt < kAttnTile; ++tt) {
        float pt[kAttnRowsPerWarp], dst[kAttnRowsPerWarp];
#pragma unroll
        for (int r = 0; r < kAttnRowsPerWarp; ++r) {
          pt[r] = __shfl_sync(0xffffffffu, p[r], tt);
          dst[r] = __shfl_sync(0xffffffffu, ds[r], tt);
        }
#pragma unroll
        for (int i = 0; i < DPL; ++i) {
          const int64_t d = lane + 32 * i;
          if (d < D) {
            const float dod = dOs[tt * (D + 1) + d], qd = Qs[tt * (D + 1) + d];
#pragma unroll
            for (int r = 0; r < kAttnRowsPerWarp; ++r) {
              dv[r][i] += pt[r] * dod;
              dk[r][i] += dst[r] * qd;
            }
          }
        }
      }
    }
  }

#pragma unroll
  for (int r = 0; r < kAttnRowsPerWarp; ++r) {
    const int64_t j = my_key0 + r;
    if (j >= T) continue;
    float* dkj = a.dk + bthd(b, j, g, T, a.NKV, D);
    float* dvj = a.dv + bthd(b, j, g, T, a.NKV, D);
#pragma unroll
    for (int i = 0; i < DPL; ++i) {
      const int64_t d = lane + 32 * i;
      if (d < D) {
        dkj[d] = a.scale * dk[r][i];
        dvj[d] = dv[r][i];
      }
    }
  }
}

template <int DPL>
void launch_bwd(cudaStream_t s, const BwdArgs& a, int64_t B) {
  const unsigned tiles = static_cast<unsigned>((a.T + kAttnRows - 1) / kAttnRows);
  const size_t dq_shared = dq_shared_bytes(a.D);
  allow_shared_bytes(attention_dq_kernel<DPL>, dq_shared);
  attention_dq_kernel<DPL><<<dim3(tiles, static_cast<unsigned>(B * a.NH)), kAttnWarps * 32, dq_shared, s>>>(a);
  CUDA_CHECK_LAUNCH();
  const size_t dkv_shared = dkv_shared_bytes(a.D);
  allow_shared_bytes(attention_dkv_kernel<DPL>, dkv_shared);
  attention_dkv_kernel<DPL><<<dim3(tiles, static_cast<unsigned>(B * a.NKV)), kAttnWarps * 32, dkv_shared, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int64_t attention_backward_scratch_floats(const AttentionDims& d) { return d.B * d.NH * d.T; }

void attention_backward(cudaStream_t s, float* dq, float* dk, float* dv, const float* dout,
                        const float* q, const float* k, const float* v, const float* lse,
                        const AttentionDims& d, float* scratch) {
  if (d.B * d.T * d.NH == 0) return;
  assert(d.NKV > 0 && d.NH % d.NKV == 0 && d.D <= kMaxHeadDim);
  check_grid_heads(d);
  const BwdArgs a{dq, dk, dv, scratch, dout, q, k, v, lse, d.T, d.NH, d.NKV, d.D,
                  1.0f / sqrtf(static_cast<float>(d.D))};
  switch (dims_per_lane(d.D)) {
    case 1: launch_bwd<1>(s, a, d.B); break;
    case 2: launch_bwd<2>(s, a, d.B); break;
    case 4: launch_bwd<4>(s, a, d.B); break;
    default: launch_bwd<8>(s, a, d.B); break;
  }
}

}  // namespace meshplan::exec::cuda
