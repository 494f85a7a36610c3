// CudnnAttention: builds cuDNN SDPA forward (with stats) and backward graphs per shape through the
// cudnn-frontend headers and runs them on the backend's stream. API as in cudnn-frontend 1.32's
// include/cudnn_frontend/graph_interface.h (sdpa, sdpa_backward) and samples/cpp/sdpa.
#include "executor/cuda/cudnn_attention.h"

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "executor/cuda/cuda_check.h"

namespace fe = cudnn_frontend;

namespace meshplan::exec {

namespace {

void cudnn_check(cudnnStatus_t code, const char* call, const char* file, int line) {
  if (code == CUDNN_STATUS_SUCCESS) return;
  device_fail("cuDNN", cudnnGetErrorString(code), call, file, line);
}
void frontend_check(fe::error_t e, const char* call, const char* file, int line) {
  if (e.is_good()) return;
  device_fail("cuDNN", e.get_message(), call, file, line);
}
#define CUDNN_CHECK(call) cudnn_check((call), #call, __FILE__, __LINE__)
#define FE_CHECK(call) frontend_check((call), #call, __FILE__, __LINE__)

// Variant-pack uids: one numbering for both graphs.
enum : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

// cuDNN's dims are always (b, h, s, d); our (B, T, H, D) row-major storage gives these strides.
std::vector<int64_t> bthd_stride(int64_t T, int64_t H, int64_t D) { return {T * H * D, D, H * D, 1}; }

fe::graph::Tensor_attributes bthd(const char* name, int64_t uid, const AttentionDims& d, int64_t heads) {
  return fe::graph::Tensor_attributes()
      .set_name(name)
      .set_uid(uid)
      .set_dim({d.B, heads, d.T, d.D})
      .set_stride(bthd_stride(d.T, heads, d.D));
}

void set_types(fe::graph::Graph& g) {
  g.set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
}

float attn_scale(const AttentionDims& d) { return 1.0f / std::sqrt(static_cast<float>(d.D)); }

// validate .. build_plans; false (not a DeviceError) when no engine supports the graph.
bool build(fe::graph::Graph& g, cudnnHandle_t h) {
  if (g.validate().is_bad()) return false;
  if (g.build_operation_graph(h).is_bad()) return false;
  if (g.create_execution_plans({fe::HeurMode_t::A}).is_bad()) return false;
  if (g.check_support(h).is_bad()) return false;
  return g.build_plans(h).is_good();
}

}  // namespace

struct CudnnAttention::Graphs {
  fe::graph::Graph fwd, bwd;
  bool ok = false;
  int64_t fwd_ws = 0, bwd_ws = 0;
};

CudnnAttention::CudnnAttention(cudaStream_t stream, bool deterministic) : deterministic_(deterministic) {
  cudnnHandle_t h = nullptr;
  CUDNN_CHECK(cudnnCreate(&h));
  handle_ = h;
  CUDNN_CHECK(cudnnSetStream(h, stream));
}

CudnnAttention::~CudnnAttention() {
  cache_.clear();
  if (handle_ != nullptr) cudnnDestroy(static_cast<cudnnHandle_t>(handle_));
}

int64_t CudnnAttention::library_version() { return static_cast<int64_t>(cudnnGetVersion()); }

CudnnAttention::Graphs& CudnnAttention::graphs(const AttentionDims& d) {
  const Key key{d.B, d.T, d.NH, d.NKV, d.D};
  auto it = cache_.find(key);
  if (it != cache_.end()) return *it->second;
  auto g = std::make_unique<Graphs>();
  auto h = static_cast<cudnnHandle_t>(handle_);
  // cuDNN refuses T = 1 in the backward and head dims that are not multiples of 8; the frontend
  // can also throw "No suitable implementation" from sdpa() itself.
  if (d.T > 1 && d.D % 8 == 0 && d.NH % d.NKV == 0) {
    try {
      set_types(g->fwd);
      auto q = g->fwd.tensor(bthd("Q", kQ, d, d.NH));
      auto k = g->fwd.tensor(bthd("K", kK, d, d.NKV));
      auto v = g->fwd.tensor(bthd("V", kV, d, d.NKV));
      auto opts = fe::graph::SDPA_attributes()
                      .set_name("sdpa_fwd")
                      .set_generate_stats(true)
                      .set_attn_scale(attn_scale(d))
                      .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                      .set_diagonal_band_right_bound(0);
      auto [o, stats] = g->fwd.sdpa(q, k, v, opts);
      o->set_output(true).set_uid(kO).set_dim({d.B, d.NH, d.T, d.D}).set_stride(bthd_stride(d.T, d.NH, d.D));
      stats->set_output(true).set_uid(kStats).set_data_type(fe::DataType_t::FLOAT)
          .set_dim({d.B, d.NH, d.T, 1}).set_stride({d.NH * d.T, d.T, 1, 1});

      set_types(g->bwd);
      auto bq = g->bwd.tensor(bthd("Q", kQ, d, d.NH));
      auto bk = g->bwd.tensor(bthd("K", kK, d, d.NKV));
      auto bv = g->bwd.tensor(bthd("V", kV, d, d.NKV));
      auto bo = g->bwd.tensor(bthd("O", kO, d, d.NH));
      auto bdo = g->bwd.tensor(bthd("dO", kDO, d, d.NH));
      auto bs = g->bwd.tensor(fe::graph::Tensor_attributes()
                                  .set_name("Stats")
                                  .set_uid(kStats)
                                  .set_dim({d.B, d.NH, d.T, 1})
                                  .set_stride({d.NH * d.T, d.T, 1, 1})
                                  .set_data_type(fe::DataType_t::FLOAT));
      // Deterministic on request: two runs then give the same bits, as every other kernel here.
      auto bopts = fe::graph::SDPA_backward_attributes()
                       .set_name("sdpa_bwd")
                       .set_attn_scale(attn_scale(d))
                       .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                       .set_diagonal_band_right_bound(0)
                       .set_deterministic_algorithm(deterministic_);
      auto [dq, dk, dv] = g->bwd.sdpa_backward(bq, bk, bv, bo, bdo, bs, bopts);
      dq->set_output(true).set_uid(kDQ).set_dim({d.B, d.NH, d.T, d.D}).set_stride(bthd_stride(d.T, d.NH, d.D));
      dk->set_output(true).set_uid(kDK).set_dim({d.B, d.NKV, d.T, d.D}).set_stride(bthd_stride(d.T, d.NKV, d.D));
      dv->set_output(true).set_uid(kDV).set_dim({d.B, d.NKV, d.T, d.D}).set_stride(bthd_stride(d.T, d.NKV, d.D));
      g->ok = build(g->fwd, h) && build(g->bwd, h);
      if (g->ok) {
        FE_CHECK(g->fwd.get_workspace_size(g->fwd_ws));
        FE_CHECK(g->bwd.get_workspace_size(g->bwd_ws));
      }
    } catch (const std::exception&) {
      g->ok = false;  // the frontend's "No suitable implementation": the caller falls back
    }
  }
  return *cache_.emplace(key, std::move(g)).first->second;
}

bool CudnnAttention::supports(const AttentionDims& d) { return graphs(d).ok; }
int64_t CudnnAttention::forward_workspace_bytes(const AttentionDims& d) { return graphs(d).fwd_ws; }
int64_t CudnnAttention::backward_workspace_bytes(const AttentionDims& d) { return graphs(d).bwd_ws; }

void CudnnAttention::forward(void* o, float* stats, const void* q, const void* k, const void* v,
                             const AttentionDims& d, void* workspace) {
  Graphs& g = graphs(d);
  if (!g.ok) device_fail("cuDNN", "no SDPA engine for this shape", "CudnnAttention::forward", __FILE__, __LINE__);
  std::unordered_map<int64_t, void*> pack{{kQ, const_cast<void*>(q)}, {kK, const_cast<void*>(k)},
                                          {kV, const_cast<void*>(v)}, {kO, o}, {kStats, stats}};
  FE_CHECK(g.fwd.execute(static_cast<cudnnHandle_t>(handle_), pack, workspace));
}

void CudnnAttention::backward(void* dq, void* dk, void* dv, const void* dout, const void* q, const void* k,
                              const void* v, const void* o, const float* stats, const AttentionDims& d,
                              void* workspace) {
  Graphs& g = graphs(d);
  if (!g.ok) device_fail("cuDNN", "no SDPA engine for this shape", "CudnnAttention::backward", __FILE__, __LINE__);
  std::unordered_map<int64_t, void*> pack{
      {kQ, const_cast<void*>(q)},  {kK, const_cast<void*>(k)},          {kV, const_cast<void*>(v)},
      {kO, const_cast<void*>(o)},  {kDO, const_cast<void*>(dout)},      {kStats, const_cast<float*>(stats)},
      {kDQ, dq},                   {kDK, dk},                           {kDV, dv}};
  FE_CHECK(g.bwd.execute(static_cast<cudnnHandle_t>(handle_), pack, workspace));
}

}  // namespace meshplan::exec
