// Elementwise ops on CUDA against the CPU ops on the same inputs: exact for integral and bool
// results, rtol 1e-5 for float32/float64 (the same formulas, which the GPU may fuse into an FMA),
// 1e-2 for float16/bfloat16 (an intermediate rounding apart).
#include "cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

constexpr DType kTested[] = {DType::Float32, DType::Float64, DType::Int32,    DType::Int64,
                             DType::Bool,    DType::Float16, DType::BFloat16, DType::UInt8};

::testing::AssertionResult matches_cpu(const Tensor& on_gpu, const Tensor& reference) {
  if (!on_gpu.is_cuda()) return ::testing::AssertionFailure() << "result not on CUDA";
  const Tensor back = cpu(on_gpu);
  if (back.dtype() != reference.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(back.dtype()) << " vs " << dtype_name(reference.dtype());
  }
  if (!is_floating_point(reference.dtype())) return same_values(back, reference);
  return all_close(back, reference, rtol_for(reference.dtype()), 1e-6);
}

TEST(CudaElementwise, BinaryOpsBroadcastEveryDtype) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kTested) {
    const Tensor a = sample({3, 1, 37}, dtype, 11);
    Tensor b = sample({4, 37}, dtype, 12);
    if (!is_floating_point(dtype) && dtype != DType::Bool) {
      b = where(b == 0, ones_like(b), b);  // no integer division by zero
    }
    for (const char* op :
         {"add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"}) {
      if (dtype == DType::Bool && std::string(op) == "sub") continue;  // rejected on every device
      SCOPED_TRACE(fmt::format("{} {}", op, dtype_name(dtype)));
      const bool alpha = std::string(op) == "add" || std::string(op) == "sub";
      const bool div = std::string(op) == "div";
      ops::Stack cpu_args{a, b}, gpu_args{gpu(a), gpu(b)};
      if (alpha) {
        cpu_args.push_back(Scalar(1));
        gpu_args.push_back(Scalar(1));
      }
      if (div) {
        cpu_args.push_back(ops::IValue());
        gpu_args.push_back(ops::IValue());
      }
      EXPECT_TRUE(matches_cpu(call(op, gpu_args), call(op, cpu_args)));
    }
  }
}

TEST(CudaElementwise, AlphaAndPromotion) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor f = sample({5, 6}, DType::Float32, 13);
  const Tensor i = sample({5, 6}, DType::Int32, 14);
  const Tensor l = sample({6}, DType::Int64, 15);
  EXPECT_TRUE(matches_cpu(add(gpu(f), gpu(f), 2.5), add(f, f, 2.5)));
  EXPECT_TRUE(matches_cpu(sub(gpu(i), gpu(l), 3), sub(i, l, 3)));
  EXPECT_TRUE(matches_cpu(gpu(i) + gpu(f), i + f));  // int32 + float32 -> float32
  EXPECT_TRUE(matches_cpu(gpu(i) * 2.5, i * 2.5));   // a Python number: float32
  EXPECT_TRUE(matches_cpu(gpu(l) + 7, l + 7));       // stays int64
  EXPECT_TRUE(matches_cpu(gpu(i) / gpu(l), i / l));  // true division of integers
  EXPECT_TRUE(matches_cpu(gpu(f) > 0.25, f > 0.25));
  const Tensor f64_scalar = full({}, 1.5, DType::Float64);  // a CPU 0-dim tensor
  EXPECT_TRUE(matches_cpu(gpu(f) * f64_scalar, f * f64_scalar));
  EXPECT_TRUE(matches_cpu(gpu(f).to(DType::Float16) + gpu(f), f.to(DType::Float16) + f));
}

TEST(CudaElementwise, InPlaceAndOut) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor f = sample({4, 9}, DType::Float32, 16);
  const Tensor i = sample({9}, DType::Int64, 17);
  Tensor g = gpu(f), c = f.clone();
  g.add_(gpu(i), 2);  // an int64 operand into a float32 tensor
  c.add_(i, 2);
  EXPECT_TRUE(matches_cpu(g, c));
  Tensor gt = gpu(f).t();  // in place on a transposed tensor
  Tensor ct = f.clone().t();
  gt.mul_(gpu(f).t());
  ct.mul_(f.t());
  EXPECT_TRUE(matches_cpu(gt, ct));
  Tensor r = gpu(f);
  r.relu_();
  EXPECT_TRUE(matches_cpu(r, f.relu()));
}

TEST(CudaElementwise, NonContiguousAndUnalignedOperands) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // 1003 elements: the vector path's tail; offset by one: no vector path at all.
  const Tensor a = sample({1004}, DType::Float32, 18);
  const Tensor b = sample({1004}, DType::Float32, 19);
  for (int64_t off : {0, 1}) {
    EXPECT_TRUE(matches_cpu(gpu(a).narrow(0, off, 1003) * gpu(b).narrow(0, off, 1003),
                            a.narrow(0, off, 1003) * b.narrow(0, off, 1003)));
    EXPECT_TRUE(matches_cpu(gpu(a).narrow(0, off, 1003).exp(), a.narrow(0, off, 1003).exp()));
  }
  const Tensor m = sample({33, 65}, DType::Float64, 20);
  EXPECT_TRUE(matches_cpu(gpu(m).t() - gpu(m).t().slice(0, 0, 65, 1), m.t() - m.t()));
  EXPECT_TRUE(matches_cpu(gpu(m).t().sigmoid(), m.t().sigmoid()));
  EXPECT_TRUE(matches_cpu(
      gpu(m).slice(1, 0, 65, 2) + gpu(m).slice(1, 1, 65, 2).narrow(1, 0, 32).sum({1}, true),
      m.slice(1, 0, 65, 2) + m.slice(1, 1, 65, 2).narrow(1, 0, 32).sum({1}, true)));
}

TEST(CudaElementwise, Where) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor c = sample({3, 1}, DType::Bool, 21);
  const Tensor a = sample({3, 4}, DType::Float32, 22);
  const Tensor b = sample({4}, DType::Int64, 23);
  EXPECT_TRUE(matches_cpu(where(gpu(c), gpu(a), gpu(b)), where(c, a, b)));
  EXPECT_TRUE(matches_cpu(where(gpu(a) > 0, gpu(a), 0.0), where(a > 0, a, 0.0)));
}

TEST(CudaElementwise, UnaryOps) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    const Tensor x = sample({7, 129}, dtype, 24);
    const Tensor pos = x.abs() + 0.5;  // the domain of log, sqrt and rsqrt
    for (const char* op :
         {"neg", "abs", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "log", "sqrt", "rsqrt"}) {
      SCOPED_TRACE(fmt::format("{} {}", op, dtype_name(dtype)));
      const std::string name = op;
      const Tensor& in = (name == "log" || name == "sqrt" || name == "rsqrt") ? pos : x;
      EXPECT_TRUE(matches_cpu(call(op, {gpu(in)}), call(op, {in})));
    }
    for (const char* approximate : {"none", "tanh"}) {
      SCOPED_TRACE(fmt::format("gelu {} {}", approximate, dtype_name(dtype)));
      EXPECT_TRUE(matches_cpu(gelu(gpu(x * 3), approximate), gelu(x * 3, approximate)));
    }
  }
  for (DType dtype : {DType::Int32, DType::Int64}) {
    const Tensor x = sample({5, 11}, dtype, 25);
    for (const char* op : {"neg", "abs", "relu"}) {
      SCOPED_TRACE(fmt::format("{} {}", op, dtype_name(dtype)));
      EXPECT_TRUE(matches_cpu(call(op, {gpu(x)}), call(op, {x})));
    }
    EXPECT_TRUE(matches_cpu(gpu(x).exp(), x.exp()));  // integers promote to float32
    EXPECT_TRUE(matches_cpu(gpu(x).sigmoid(), x.sigmoid()));
  }
  // NaN and infinities go through as on the CPU.
  const Tensor special = from_vector(std::vector<float>{NAN, INFINITY, -INFINITY, 0.0f, -0.0f});
  for (const char* op : {"relu", "exp", "tanh", "sigmoid", "abs"}) {
    SCOPED_TRACE(op);
    EXPECT_TRUE(matches_cpu(call(op, {gpu(special)}), call(op, {special})));
  }
  EXPECT_TRUE(matches_cpu(maximum(gpu(special), gpu(special.flip({0}))),
                          maximum(special, special.flip({0}))));
}

TEST(CudaElementwise, MixedDevicesRaise) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor c = sample({4, 4}, DType::Float32, 26);
  const Tensor g = gpu(c);
  const std::string dev = g.device().str();
  EXPECT_TRUE(throws_error([&] { (void)(g + c); }, {"add", dev, "cpu"}));
  EXPECT_TRUE(throws_error([&] { (void)(c + g); }, {dev, "cpu"}));
  EXPECT_TRUE(throws_error([&] { (void)where(g > 0, g, c); }, {"where", dev, "cpu"}));
  EXPECT_TRUE(throws_error([&] { (void)mm(g, c); }, {"mm", dev, "cpu"}));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

using namespace cuda_test;

// fmod and remainder (signs of negative operands, float and integer), the shifts (amounts out of
// range), sign (NaN, -0.0) and erfinv against the CPU; an integer divisor of 0 raises as there.
TEST(CudaElementwise, ModuloShiftsSignAndErfinv) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Int8}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor a = sample({5, 33}, dtype, 21);
    Tensor b = sample({33}, dtype, 22);
    b = where(b == 0, full_like(b, 3), b);
    for (const char* op : {"fmod", "remainder"}) {
      EXPECT_TRUE(same_values(cpu(call(op, {gpu(a), gpu(b)})), call(op, {a, b}))) << op;
    }
    EXPECT_TRUE(same_values(cpu(call("sign", {gpu(a)})), call("sign", {a})));
    if (!is_floating_point(dtype)) {
      const Tensor amounts = tensor({-1, 0, 1, 3, 7, 8, 31, 32, 63, 64}).to(dtype);
      const Tensor values = full({10}, -5).to(dtype);
      for (const char* op : {"bitwise_left_shift", "bitwise_right_shift"}) {
        EXPECT_TRUE(
            same_values(cpu(call(op, {gpu(values), gpu(amounts)})), call(op, {values, amounts})))
            << op;
      }
      const Tensor zero = zeros_like(b);
      EXPECT_TRUE(throws_error([&] { call("fmod", {gpu(a), gpu(zero)}); }, {"ZeroDivisionError"}));
    }
  }
  const Tensor special = tensor({std::nan(""), -0.0, 0.0, -2.5, 3.0});
  EXPECT_TRUE(same_values(cpu(call("sign", {gpu(special)})), call("sign", {special})));
  const Tensor p = tensor({-0.999, -0.5, 0.0, 0.3, 0.9999, 1.0, -1.0, 2.0});
  EXPECT_TRUE(all_close(cpu(call("erfinv", {gpu(p)})), call("erfinv", {p}), 1e-6, 1e-7));
  EXPECT_TRUE(all_close(cpu(call("erfinv", {gpu(p.to(DType::Float64))})),
                        call("erfinv", {p.to(DType::Float64)}), 1e-12, 1e-14));
}

}  // namespace
}  // namespace kiln
