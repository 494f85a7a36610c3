// The backend selftest's logic on the CPU (no GPU needed): the fast CPU kernels against their
// reference twins pass every check; a backend with one wrong kernel is stopped at that kernel
// with its name; the error metric, the table and the device-fit refusal.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "executor/backend.h"
#include "executor/backend_factory.h"
#include "executor/tensor.h"
#include "executor/device_fit.h"
#include "executor/selftest/device_selftest.h"
#include "executor/selftest/selftest.h"

using namespace meshplan::exec;

namespace {

/// A Backend that forwards every call to a CPU backend: the base of the deliberately faulty one.
class Forwarding : public Backend {
 public:
  Forwarding() : in_(make_cpu_backend()) {}
  const char* name() const override { return "fake-device"; }
  void copy_from_host(void* d, const void* s, uint64_t b) override { in_->copy_from_host(d, s, b); }
  void copy_to_host(void* d, const void* s, uint64_t b) override { in_->copy_to_host(d, s, b); }
  void copy(void* d, const void* s, uint64_t b) override { in_->copy(d, s, b); }
  void fill(float* x, float v, int64_t n) override { in_->fill(x, v, n); }
  void scale(float* x, float a, int64_t n) override { in_->scale(x, a, n); }
  void axpy(float* y, float a, const float* x, int64_t n) override { in_->axpy(y, a, x, n); }
  void add(float* o, const float* a, const float* b, int64_t n) override { in_->add(o, a, b, n); }
  double sum_squares(const float* x, int64_t n) override { return in_->sum_squares(x, n); }
  double sum(const float* x, int64_t n) override { return in_->sum(x, n); }
  void to_bf16(void* d, const float* s, int64_t n) override { in_->to_bf16(d, s, n); }
  void from_bf16(float* d, const void* s, int64_t n) override { in_->from_bf16(d, s, n); }
  void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float al, const float* A, const float* B, float be,
            float* C) override {
    in_->gemm(ta, tb, M, N, K, al, A, B, be, C);
  }
  void embedding_forward(float* o, const int32_t* t, const float* w, int64_t vb, int64_t V, int64_t N, int64_t C) override {
    in_->embedding_forward(o, t, w, vb, V, N, C);
  }
  void embedding_backward(float* dw, const float* d, const int32_t* t, int64_t vb, int64_t V, int64_t N, int64_t C) override {
    in_->embedding_backward(dw, d, t, vb, V, N, C);
  }
  void rmsnorm_forward(float* o, float* r, const float* x, const float* w, int64_t N, int64_t C, float eps) override {
    in_->rmsnorm_forward(o, r, x, w, N, C, eps);
  }
  void rmsnorm_backward(float* dx, float* dw, const float* d, const float* x, const float* w, const float* r, int64_t N,
                        int64_t C) override {
    in_->rmsnorm_backward(dx, dw, d, x, w, r, N, C);
  }
  void rope_forward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float th) override { in_->rope_forward(x, B, T, H, D, th); }
  void rope_backward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float th) override { in_->rope_backward(x, B, T, H, D, th); }
  void attention_forward(float* o, float* l, float* p, const float* q, const float* k, const float* v,
                         const AttentionDims& d) override {
    in_->attention_forward(o, l, p, q, k, v, d);
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* d, const float* q, const float* k, const float* v,
                          const float* o, const float* l, const float* p, const AttentionDims& dims) override {
    in_->attention_backward(dq, dk, dv, d, q, k, v, o, l, p, dims);
  }
  void swiglu_forward(float* o, const float* g, const float* u, int64_t n) override { in_->swiglu_forward(o, g, u, n); }
  void swiglu_backward(float* dg, float* du, const float* d, const float* g, const float* u, int64_t n) override {
    in_->swiglu_backward(dg, du, d, g, u, n);
  }
  void ce_row_max(float* m, const float* l, int64_t N, int64_t V) override { in_->ce_row_max(m, l, N, V); }
  void ce_row_sumexp(float* s, const float* l, const float* m, int64_t N, int64_t V) override { in_->ce_row_sumexp(s, l, m, N, V); }
  void ce_target_logit(float* t, const float* l, const int32_t* g, int64_t vb, int64_t N, int64_t V) override {
    in_->ce_target_logit(t, l, g, vb, N, V);
  }
  void ce_merge_stats(float* m, float* s, const float* cm, const float* cs, int64_t N) override {
    in_->ce_merge_stats(m, s, cm, cs, N);
  }
  void ce_loss(float* o, const float* m, const float* s, const float* t, int64_t N) override { in_->ce_loss(o, m, s, t, N); }
  void ce_backward(float* d, const float* l, const float* m, const float* s, const int32_t* t, int64_t vb, float sc, int64_t N,
                   int64_t V) override {
    in_->ce_backward(d, l, m, s, t, vb, sc, N, V);
  }
  void adamw(float* p, const float* g, float* m, float* v, int64_t n, const AdamWStep& s) override { in_->adamw(p, g, m, v, n, s); }

 protected:
  void* allocate_raw(uint64_t bytes) override { return in_->allocate(bytes); }
  void free_raw(void* p, uint64_t bytes) override { in_->deallocate(p, bytes); }
  std::unique_ptr<Backend> in_;
};

/// Attention's dk is off by 1e-3 relative: a subtle kernel bug the selftest must name.
class WrongAttentionDk : public Forwarding {
 public:
  void attention_backward(float* dq, float* dk, float* dv, const float* d, const float* q, const float* k, const float* v,
                          const float* o, const float* l, const float* p, const AttentionDims& dims) override {
    Forwarding::attention_backward(dq, dk, dv, d, q, k, v, o, l, p, dims);
    in_->scale(dk, 1.001f, dims.B * dims.T * dims.NKV * dims.D);
  }
};

std::unique_ptr<Backend> reference() {
  CpuOptions o;
  o.naive_gemm = true;
  o.reference_attention = true;
  return make_cpu_backend(o);
}

}  // namespace

TEST_CASE("selftest: the fast CPU kernels pass every check against the reference", "[selftest]") {
  auto fast = make_cpu_backend();
  auto ref = reference();
  SelftestOptions o;
  o.gemm_tolerance = 1e-5;  // both fp32
  const SelftestReport r = run_backend_selftest(*fast, *ref, o);
  INFO(selftest_table(r));
  CHECK(r.ok());
  CHECK(r.rows.size() >= 30);
  CHECK(fast->memory().held_bytes() == 0);  // the checks free what they allocate
}

TEST_CASE("selftest: a wrong kernel stops the selftest with its name", "[selftest]") {
  WrongAttentionDk bad;
  auto ref = reference();
  const SelftestReport r = run_backend_selftest(bad, *ref, {});
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.first_failure() != nullptr);
  CHECK(r.first_failure()->name == "attention backward dk");
  CHECK(r.first_failure()->max_rel_error > r.first_failure()->tolerance);
  CHECK(r.rows.back().name.rfind("attention backward dv", 0) == 0);  // stopped after that check
  const std::string table = selftest_table(r);
  CHECK(table.find("MISMATCH") != std::string::npos);
  CHECK(table.find("max rel error") != std::string::npos);
}

TEST_CASE("selftest: the named cpu selftest passes, cuda without a device is an error", "[selftest]") {
  auto cpu = run_named_selftest("cpu");
  REQUIRE(cpu);
  INFO(selftest_table(cpu->report));
  CHECK(cpu->ok());
  CHECK(selftest_failure_line(*cpu).empty());
  auto unknown = run_named_selftest("tpu");
  CHECK_FALSE(unknown);
}

TEST_CASE("selftest: the error metric", "[selftest]") {
  CHECK(compare_outputs("x", "", {1, 2}, {1, 2}, 0).ok);
  const SelftestRow r = compare_outputs("x", "", {1.0f, 2.02f}, {1.0f, 2.0f}, 1e-2);
  CHECK(r.max_abs_error == Approx(0.02).epsilon(1e-4));
  CHECK(r.max_rel_error == Approx(0.01).epsilon(1e-4));
  CHECK_FALSE(compare_outputs("x", "", {NAN}, {0.0f}, 1).ok);          // NaN never passes
  CHECK_FALSE(compare_outputs("x", "", {1.0f}, {1.0f, 2.0f}, 1).ok);   // size mismatch
  // Reference exactly 0 (attention dq at T = 1): noise compared against the floor.
  CHECK(compare_outputs("x", "", {1e-7f}, {-1e-7f}, 1e-4, 1.0).ok);
  CHECK_FALSE(compare_outputs("x", "", {1e-7f}, {-1e-7f}, 1e-4).ok);
}

TEST_CASE("device fit: a plan predicted not to fit is refused unless forced", "[selftest]") {
  DeviceFitInput in;
  in.predicted_peak_bytes = 90'000'000'000ull;
  in.device_total_bytes = 80'000'000'000ull;
  in.device_used_bytes = 1'000'000'000ull;
  in.device_name = "NVIDIA H100";
  auto refused = check_device_fits(in, false, "plan.json");
  REQUIRE_FALSE(refused);
  const std::string line = refused.error().one_line();
  CHECK(line.find("90.00 GB") != std::string::npos);
  CHECK(line.find("79.00 GB free of 80.00 GB") != std::string::npos);
  CHECK(line.find("--force") != std::string::npos);
  CHECK(check_device_fits(in, true, "plan.json"));
  in.predicted_peak_bytes = 70'000'000'000ull;
  CHECK(check_device_fits(in, false, "plan.json"));
  in.device_total_bytes = 0;  // not a device backend
  in.predicted_peak_bytes = 1ull << 62;
  CHECK(check_device_fits(in, false, "plan.json"));
}

TEST_CASE("backend precision: what each backend computes in, for the run JSON and the prediction", "[selftest]") {
  const BackendPrecision cuda = backend_precision("cuda");  // the default: bf16 copies of the operands
  CHECK(cuda.gemm_dtype == "bf16");                         // real bf16 operands: the bf16 rate
  CHECK(cuda.gemm_operand_copies);                          // and the copies are costed
  CHECK(cuda.activation_dtype == "fp32");                   // memory: activations stored fp32
  CHECK(cuda.description.find("bf16-copy GEMM inputs") != std::string::npos);
  CudaOptions fp32;
  fp32.gemm = GemmPrecision::Fp32;
  CHECK(backend_precision("cuda", {}, fp32).gemm_dtype == "fp32");
  CHECK_FALSE(backend_precision("cuda", {}, fp32).gemm_operand_copies);
  CudaOptions fast;
  fast.gemm = GemmPrecision::Bf16;  // cuBLASLt rounds fp32 operands but runs TF32-class kernels (H100)
  CHECK(backend_precision("cuda", {}, fast).gemm_dtype == "tf32");
  CHECK_FALSE(backend_precision("cuda", {}, fast).gemm_operand_copies);
  CHECK(backend_precision("cuda", {}, fast).description.find("bf16 GEMM inputs") != std::string::npos);
  // Attention: the CPU keeps probabilities; the CUDA backend never does (cuDNN where built).
  using Att = BackendPrecision::Attention;
  CHECK(backend_precision("cpu").attention == Att::Materialized);
  CHECK(cuda.attention == (cudnn_attention_compiled() ? Att::Cudnn : Att::CudaFp32));
  CHECK(std::string(to_string(cuda.attention)) == (cudnn_attention_compiled() ? "cudnn" : "cuda-fp32"));
  CudaOptions reference;
  reference.attention = CudaAttention::Reference;
  CHECK(backend_precision("cuda", {}, reference).attention == Att::CudaFp32);
  CHECK(parse_cuda_attention("cudnn") == CudaAttention::Cudnn);
  CHECK_FALSE(cuda_options_of(*make_cpu_backend()).has_value());  // the selftest then checks fp32
  CHECK_FALSE(parse_cuda_attention("flash").has_value());
  for (GemmPrecision g : {GemmPrecision::Bf16, GemmPrecision::Bf16Copy, GemmPrecision::Tf32, GemmPrecision::Fp32})
    CHECK(parse_gemm_precision(to_string(g)) == g);
  CHECK_FALSE(parse_gemm_precision("fp16").has_value());
  CHECK(backend_precision("cpu").description.rfind("fp32", 0) == 0);
  CpuOptions emulate;
  emulate.bf16_emulation = true;
  const BackendPrecision cpu16 = backend_precision("cpu", emulate);
  CHECK(cpu16.description.rfind("bf16", 0) == 0);
  CHECK(cpu16.gemm_dtype == "fp32");  // the CPU's arithmetic is fp32: its rate is what ran
}

TEST_CASE("bf16 emulation rounds to nearest even and leaves fp32 master math alone", "[selftest]") {
  CpuOptions o;
  o.bf16_emulation = true;
  auto be = make_cpu_backend(o);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even mantissa wins (1); 1 + 3*2^-8 rounds up.
  const std::vector<float> a{1.0f + 1.0f / 256, 1.0f + 3.0f / 256}, eye{1.0f};
  std::vector<float> c(2, 0.0f);
  Tensor ta(*be, DType::F32, {2}), tb(*be, DType::F32, {1}), tc(*be, DType::F32, {2});
  be->copy_from_host(ta.data(), a.data(), 8);
  be->copy_from_host(tb.data(), eye.data(), 4);
  be->fill(tc.f32(), 0.0f, 2);
  be->gemm(false, false, 2, 1, 1, 1.0f, ta.f32(), tb.f32(), 0.0f, tc.f32());  // (2,1) x (1,1)
  be->copy_to_host(c.data(), tc.data(), 8);
  CHECK(c[0] == 1.0f);
  CHECK(c[1] == 1.0f + 4.0f / 256);
  be->axpy(ta.f32(), 1.0f, ta.f32(), 2);  // elementwise (optimizer-side) math is not rounded
  be->copy_to_host(c.data(), ta.data(), 8);
  CHECK(c[0] == 2.0f + 2.0f / 256);
}
