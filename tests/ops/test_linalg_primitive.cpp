// float32 products big enough (m * n * k >= 64^3) to go through oneDNN's matmul primitive, against
// float64 loops: every operand layout, out= layouts, fused and unfused addmm biases, alpha/beta,
// batched and broadcast batches, thread counts, calls from inside a parallel region, and a
// primitive reused from the cache on new data.
#include "ops/test_linalg_util.h"

#include <kiln/core/parallel.h>

#include <array>
#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::f64_tensor;
using testing::matrix_in_layout;
using testing::ref_matmul;
using testing::ThreadsGuard;
using testing::values;
const auto& op = testing::registry_op;

constexpr double kTol = 1e-4;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const TensorOptions kF32(kFloat32);

// beta * self + alpha * a @ b in float64, self broadcast to the product's shape.
Tensor ref_addmm(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha) {
  const Tensor p = ref_matmul(a, b);
  const std::vector<double> pv = values(p), sv = values(self.expand(p.sizes()));
  std::vector<double> want(pv.size());
  for (size_t i = 0; i < pv.size(); ++i) want[i] = beta * sv[i] + alpha * pv[i];
  return f64_tensor(want, p.sizes().vec());
}

TEST(LinalgPrimitive, MmEveryLayoutAndThreadCount) {
  ThreadsGuard guard;
  manual_seed(11);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (int la = 0; la < 4; ++la) {
      for (int lb = 0; lb < 4; ++lb) {
        Tensor a = matrix_in_layout(64, 72, kFloat32, la);
        Tensor b = matrix_in_layout(72, 80, kFloat32, lb);
        EXPECT_TRUE(all_close(mm(a, b), ref_matmul(a, b), kTol, kTol)) << la << " " << lb;
      }
    }
  }
}

TEST(LinalgPrimitive, CachedPrimitiveOnNewData) {
  // The same geometry twice: the second call reuses the built primitive on other buffers.
  manual_seed(12);
  for (int i = 0; i < 3; ++i) {
    Tensor a = randn({96, 64}, kF32);
    Tensor b = randn({64, 48}, kF32);
    EXPECT_TRUE(all_close(mm(a, b), ref_matmul(a, b), kTol, kTol)) << i;
  }
}

TEST(LinalgPrimitive, OutLayouts) {
  manual_seed(13);
  Tensor a = randn({70, 64}, kF32);
  Tensor b = randn({90, 64}, kF32).t();  // a linear layer's weight.t()
  const Tensor ref = ref_matmul(a, b);
  Tensor col_out = full({90, 70}, kNaN, kF32).t();
  Tensor strided_out = full({70, 180}, kNaN, kF32).slice(1, 0, 180, 2);
  Tensor padded_out = full({70, 95}, kNaN, kF32).narrow(1, 2, 90);
  for (Tensor out : {col_out, strided_out, padded_out}) {
    ops::call(op("mm.out"), {a, b, out});
    EXPECT_TRUE(all_close(out, ref, kTol, kTol)) << out.stride(0) << " " << out.stride(1);
  }
}

TEST(LinalgPrimitive, AddmmBiasesAlphaAndBeta) {
  manual_seed(14);
  const int64_t m = 64, k = 96, n = 72;
  Tensor a = randn({m, k}, kF32);
  Tensor bt = randn({n, k}, kF32);  // a linear layer's weight: the product reads weight.t()
  const Tensor b = bt.t();
  const std::vector<Tensor> selves = {
      randn({n}, kF32),    randn({1, n}, kF32), randn({m, 1}, kF32),
      randn({m, n}, kF32), tensor(0.5, kF32),   randn({2 * n}, kF32).slice(0, 0, 2 * n, 2)};
  const std::vector<std::array<double, 2>> scales = {{1, 1}, {0.5, 2}, {1, -1}, {-2, 1}};
  for (size_t i = 0; i < selves.size(); ++i) {
    for (auto [beta, alpha] : scales) {
      Tensor got = addmm(selves[i], a, b, beta, alpha);
      EXPECT_TRUE(all_close(got, ref_addmm(selves[i], a, b, beta, alpha), kTol, kTol))
          << "self " << i << " beta " << beta << " alpha " << alpha;
    }
  }
  // beta = 0 ignores a NaN self; out= into a column-major buffer with a fused bias.
  Tensor nan_self = full({m, n}, kNaN, kF32);
  EXPECT_TRUE(all_close(addmm(nan_self, a, b, 0.0), ref_matmul(a, b), kTol, kTol));
  Tensor out = full({n, m}, kNaN, kF32).t();
  ops::call(op("addmm.out"), {selves[0], a, b, Scalar(1), Scalar(1), out});
  EXPECT_TRUE(all_close(out, ref_addmm(selves[0], a, b, 1, 1), kTol, kTol));
  // In place: self is both the addend and the output.
  Tensor acc = randn({m, n}, kF32);
  const Tensor want = ref_addmm(acc.clone(), a, b, 1, 1);
  ops::call(op("addmm_"), {acc, a, b, Scalar(1), Scalar(1)});
  EXPECT_TRUE(all_close(acc, want, kTol, kTol));
}

TEST(LinalgPrimitive, LinearFoldsBatchAndFusesBias) {
  manual_seed(15);
  Tensor x = randn({4, 32, 128}, kF32);
  Tensor w = randn({96, 128}, kF32);
  Tensor bias = randn({96}, kF32);
  const Tensor want = ref_addmm(bias, x.reshape({128, 128}), w.t(), 1, 1).reshape({4, 32, 96});
  EXPECT_TRUE(all_close(linear(x, w, bias), want, kTol, kTol));
  EXPECT_TRUE(
      all_close(linear(x.transpose(0, 1).contiguous().transpose(0, 1), w, bias), want, kTol, kTol));
}

TEST(LinalgPrimitive, BatchedAndBroadcastBatches) {
  ThreadsGuard guard;
  manual_seed(16);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor a = randn({3, 64, 80}, kF32);
    Tensor b = randn({3, 72, 80}, kF32).transpose(1, 2);
    EXPECT_TRUE(all_close(bmm(a, b), ref_matmul(a, b), kTol, kTol));
    // Batch not outermost in memory, and a batch stride of 0 on either side.
    Tensor a_inner = randn({64, 3, 80}, kF32).transpose(0, 1);
    EXPECT_TRUE(all_close(bmm(a_inner, b), ref_matmul(a_inner, b), kTol, kTol));
    Tensor shared_b = randn({80, 72}, kF32).unsqueeze(0).expand({3, 80, 72});
    EXPECT_TRUE(all_close(bmm(a, shared_b), ref_matmul(a, shared_b), kTol, kTol));
    Tensor shared_a = randn({64, 80}, kF32).unsqueeze(0).expand({3, 64, 80});
    EXPECT_TRUE(all_close(bmm(shared_a, b), ref_matmul(shared_a, b), kTol, kTol));
    // baddbmm: alpha and beta on a broadcast self.
    Tensor self = randn({72}, kF32);
    EXPECT_TRUE(
        all_close(baddbmm(self, a, b, 0.5, 3.0), ref_addmm(self, a, b, 0.5, 3.0), kTol, kTol));
  }
}

TEST(LinalgPrimitive, InsideAParallelRegion) {
  // Each task's product runs on one thread (the primitive is keyed by the threads it may use).
  ThreadsGuard guard;
  set_num_threads(2);
  manual_seed(17);
  std::vector<Tensor> as, bs;
  for (int i = 0; i < 4; ++i) {
    as.push_back(randn({64, 64}, kF32));
    bs.push_back(randn({64, 80}, kF32).t().contiguous().t());
  }
  std::vector<Tensor> got(4);
  parallel_for(0, 4, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) got[i] = mm(as[i], bs[i]);
  });
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(all_close(got[i], ref_matmul(as[i], bs[i]), kTol, kTol)) << i;
  }
}

}  // namespace
}  // namespace kiln
