// The inductor on a GPU: graphs of CUDA tensors compiled by the `inductor` backend (generated
// CUDA kernels compiled with NVRTC, cuBLAS for matrix products) against eager on the CPU with the
// same inputs, forward and backward. Float32 within 1e-5 relative (the op's sample tolerance
// where larger), integers and bools exactly. Skipped without a CUDA device.
#include "capture/capture_test_util.h"
#include "cuda/cuda_test_util.h"
#include "inductor/cuda_kernels.h"
#include "inductor/inductor_test_util.h"
#include "opinfo_selection.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

namespace kiln {
namespace {

using namespace cuda_test;

#define REQUIRE_GPU() \
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

// `f` compiled on the GPU and run on `inputs` moved there, against `f` eagerly on the CPU; no
// graph may fall back to the interpreter. Returns the GPU results (on the CPU).
std::vector<Tensor> expect_compiled_on_gpu_matches_cpu(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
    const std::vector<Tensor>& inputs, CompileOptions options = {}, double rtol = 1e-5,
    double atol = 1e-6) {
  testing::LogCapture logs("perf_hints");
  std::vector<Tensor> on_gpu;
  for (const Tensor& t : inputs) on_gpu.push_back(gpu(t));
  const std::vector<Tensor> want = f(inputs);
  auto compiled = compile(f, options);
  const std::vector<Tensor> got = compiled(on_gpu);
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  std::vector<Tensor> back;
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    EXPECT_TRUE(got[i].device().is_cuda()) << "output " << i;
    back.push_back(cpu(got[i]));
    if (is_floating_point(want[i].dtype())) {
      EXPECT_TRUE(all_close(back[i], want[i], rtol, atol)) << "output " << i;
    } else {
      EXPECT_TRUE(same_values(back[i], want[i])) << "output " << i;
    }
  }
  return back;
}

TEST(CudaInductor, PointwiseAndBroadcastingMatchTheCpu) {
  REQUIRE_GPU();
  const Tensor x = sample({33, 65}, DType::Float32, 1), y = sample({65}, DType::Float32, 2);
  expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) {
        const Tensor& a = in[0];
        const Tensor& b = in[1];
        return std::vector<Tensor>{((a * b + 1).exp() - b.sigmoid()).relu(),
                                   where(a > b, a.tanh(), b.erf()), (a / 3).floor(),
                                   a.t().contiguous() * 2};
      },
      {x, y});
  // Integers and bools exactly; float64 too.
  const Tensor i = sample({17, 9}, DType::Int64, 3), j = sample({9}, DType::Int32, 4);
  const Tensor d = sample({17, 9}, DType::Float64, 5);
  expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0] * in[1] - 7, (in[0] > in[1]) & (in[1] != 0),
                                   in[2].exp() + in[0]};
      },
      {i, j, d}, {}, 1e-12, 1e-12);
}

// The scheduler's GPU rules (CudaCodegen.KernelsWithMuchWorkPerRowStayApartOverFewRows,
// PointwiseValuesReadAtTheirElementStayInRegisters) run: siblings over 16 rows kept apart, and a
// value computed in the kernel that reads it back, in bfloat16.
TEST(CudaInductor, KernelsKeptApartOrComputedInTheirReaderMatchTheCpu) {
  REQUIRE_GPU();
  const Tensor x = sample({16, 96}, DType::Float32, 31),
               y = sample({16, 64, 96}, DType::Float32, 32);
  const Tensor a = sample({4, 8, 28, 28}, DType::Float32, 33);
  const Tensor b = sample({4, 8, 28, 28}, DType::Float32, 34),
               s = sample({8, 1, 1}, DType::Float32, 35);
  expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) {
        const Tensor sum = ((in[2] * in[4]).exp() + in[3]).to(DType::BFloat16).to(DType::Float32);
        return std::vector<Tensor>{in[0].tanh(), in[1] < 0.5, in[1].sum(-1),
                                   where(sum < 0, zeros_like(sum), sum).to(DType::BFloat16)};
      },
      {x, y, a, b, s});
}

TEST(CudaInductor, ReductionsMatchTheCpu) {
  REQUIRE_GPU();
  for (const std::vector<int64_t>& sizes :
       std::vector<std::vector<int64_t>>{{37, 1000}, {3, 5, 7}, {2, 20000}, {1, 1}}) {
    SCOPED_TRACE(fmt::format("[{}]", fmt::join(sizes, ", ")));
    const Tensor x = sample(sizes, DType::Float32, 6);
    expect_compiled_on_gpu_matches_cpu(
        [](const std::vector<Tensor>& in) {
          const Tensor& a = in[0];
          return std::vector<Tensor>{
              a.sum(),   a.sum(0),   a.sum(-1, true), a.amax(-1),
              a.amin(0), a.mean(-1), a.var(-1),       (a * a).sum(-1).sqrt()};
        },
        {x}, {}, 1e-5, 1e-5);
  }
  const Tensor n = sample({9, 300}, DType::Int64, 7);
  expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0].sum(-1), in[0].amax(0), (in[0] > 0).sum(),
                                   (in[0] > 3).any(-1)};
      },
      {n});
  // A NaN anywhere in a row makes its maximum NaN.
  Tensor with_nan = sample({4, 100}, DType::Float32, 8);
  with_nan.select(0, 2).select(0, 57).fill_(std::nan(""));
  const std::vector<Tensor> got = expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].amax(-1)}; },
      {with_nan});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::isnan(got[0][2].item<float>()));
}

// Forward and backward compiled on the GPU (aot's two graphs), gradients against CPU eager.
void expect_gradients_match(const std::function<Tensor(const std::vector<Tensor>&)>& loss_of,
                            const std::vector<Tensor>& inputs, double rtol = 1e-5,
                            double atol = 1e-6) {
  testing::LogCapture logs("perf_hints");
  std::vector<Tensor> eager, on_gpu;
  for (const Tensor& t : inputs) {
    eager.push_back(t.clone().requires_grad_(true));
    on_gpu.push_back(gpu(t).requires_grad_(true));
  }
  const Tensor want = loss_of(eager);
  want.backward();
  auto compiled = compile([&](const std::vector<Tensor>& in) { return loss_of(in); });
  const Tensor got = compiled(on_gpu);
  got.backward();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  EXPECT_TRUE(all_close(cpu(got), want, rtol, atol));
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(on_gpu[i].grad().defined()) << "input " << i;
    EXPECT_TRUE(on_gpu[i].grad().device().is_cuda());
    EXPECT_TRUE(all_close(cpu(on_gpu[i].grad()), eager[i].grad(), rtol, atol)) << "input " << i;
  }
}

// Split reductions (on by default on GPUs): batch norm's statistics and gradient sums per channel
// over [32, 16, 32, 32] (16 outputs of 32768: 32 partials each), row-major and channels-last, and
// a sum to one value, forward and backward against the CPU.
TEST(CudaInductor, SplitReductionsMatchTheCpu) {
  REQUIRE_GPU();
  for (const MemoryFormat format : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
    SCOPED_TRACE(format == MemoryFormat::Contiguous ? "row-major" : "channels-last");
    const Tensor x = sample({32, 16, 32, 32}, DType::Float32, 50).contiguous(format);
    const Tensor w = sample({16}, DType::Float32, 51), b = sample({16}, DType::Float32, 52);
    testing::LogCapture logs("fusion");
    expect_gradients_match(
        [](const std::vector<Tensor>& in) {
          auto [y, mean, invstd] =
              native_batch_norm(in[0], in[1], in[2], Tensor(), Tensor(), true, 0.1, 1e-5);
          return (y.relu() * y).mean() + in[0].amax();
        },
        {x, w, b}, 1e-4, 1e-5);
    EXPECT_GE(logs.count("long reductions with few outputs split in two"), 2u) << logs.all();
  }
}

// Sums over rows (bias and layer-norm weight gradients: [rows, features].sum(0)) run in the
// column form, 8 features to a block: feature counts that are no multiple of 8, a leading
// loop kept outside ([5, 33, 40].sum(1)), a per-feature epilogue in the same kernel, float64,
// integers, and a NaN in one column.
TEST(CudaInductor, ColumnReductionsMatchTheCpu) {
  REQUIRE_GPU();
  const Tensor x = sample({300, 70}, DType::Float32, 40), y = sample({300, 70}, DType::Float32, 41);
  expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) {
        const Tensor& a = in[0];
        const Tensor& b = in[1];
        return std::vector<Tensor>{a.sum(0), (a * b).sum(0) * 2 + a.sum(0), a.amax(0),
                                   a.mean(0, true), (a - b).abs().amin(0)};
      },
      {x, y});
  // Sums of 165 values of order one that cancel to about 0.02: the CPU's float partial sums and
  // the GPU's double accumulators differ by float rounding of the terms (~1e-6), hence atol 1e-5.
  const Tensor z = sample({5, 33, 40}, DType::Float32, 42);
  expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0].sum(1), in[0].var(1), in[0].sum({0, 1})};
      },
      {z}, {}, 1e-5, 1e-5);
  const Tensor d = sample({2049, 65}, DType::Float64, 43);
  const Tensor n = sample({1000, 33}, DType::Int64, 44);
  expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0].sum(0), in[1].sum(0), in[1].amax(0)};
      },
      {d, n}, {}, 1e-12, 1e-12);
  Tensor with_nan = sample({100, 40}, DType::Float32, 45);
  with_nan.select(0, 57).select(0, 3).fill_(std::nan(""));
  const std::vector<Tensor> got = expect_compiled_on_gpu_matches_cpu(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].amax(0)}; }, {with_nan});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::isnan(got[0][3].item<float>()));
  EXPECT_FALSE(std::isnan(got[0][4].item<float>()));
}

TEST(CudaInductor, SoftmaxAndLayerNormForwardAndBackward) {
  REQUIRE_GPU();
  const Tensor x = sample({24, 300}, DType::Float32, 9);
  const Tensor w = sample({300}, DType::Float32, 10), b = sample({300}, DType::Float32, 11);
  expect_gradients_match(
      [](const std::vector<Tensor>& in) {
        const Tensor s = softmax(in[0], -1);
        const Tensor l = nn::functional::layer_norm(in[0], {300}, in[1], in[2]);
        return (s * in[1]).sum() + l.square().mean() + log_softmax(in[0], 0).mean();
      },
      {x, w, b}, 1e-4, 1e-5);
}

TEST(CudaInductor, MlpForwardAndBackward) {
  REQUIRE_GPU();
  const Tensor x = sample({16, 32}, DType::Float32, 12);
  const Tensor w1 = sample({64, 32}, DType::Float32, 13) * 0.2,
               b1 = sample({64}, DType::Float32, 14);
  const Tensor w2 = sample({8, 64}, DType::Float32, 15) * 0.2, b2 = sample({8}, DType::Float32, 16);
  expect_gradients_match(
      [](const std::vector<Tensor>& in) {
        const Tensor h = relu(matmul(in[0], in[1].t()) + in[2]);
        return (matmul(h, in[3].t()) + in[4]).tanh().square().mean();
      },
      {x, w1, b1, w2, b2}, 1e-4, 1e-6);
}

// max-autotune on the GPU: each kernel's launch variants are timed at the first call (the
// fusion channel logs the choices), results match the CPU with the winners and with each variant
// forced, and a second compilation in the same cache reads the winners file instead of timing.
TEST(CudaInductor, MaxAutotuneTimesLaunchVariants) {
  REQUIRE_GPU();
  testing::TemporaryFolder folder;
  testing::ScopedEnv cache("KILN_CACHE_DIR", (folder.path() / "cache").string());
  const Tensor x = sample({64, 300}, DType::Float32, 21), y = sample({5000}, DType::Float32, 22);
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[1].sin() * 2.0).relu(), softmax(in[0], -1)};
  };
  CompileOptions options;
  options.mode = "max-autotune-no-cudagraphs";
  for (int compilation = 0; compilation < 2; ++compilation) {
    testing::LogCapture logs("fusion");
    expect_compiled_on_gpu_matches_cpu(f, {x, y}, options);
    if (compilation == 0) {
      EXPECT_GE(logs.count(" -> "), 1u) << logs.all();  // timed, and a label chosen
      EXPECT_GE(logs.count("winners written to"), 1u) << logs.all();
    } else {
      EXPECT_GE(logs.count("winners read from"), 1u) << logs.all();
      EXPECT_EQ(logs.count(" -> "), 0u) << logs.all();
    }
  }
  for (const std::string& label : inductor::cuda_variant_labels()) {
    SCOPED_TRACE(label);
    CompileOptions forced = options;
    forced.options["autotune_force"] = label;
    testing::LogCapture logs("fusion");
    expect_compiled_on_gpu_matches_cpu(f, {x, y}, forced);
    EXPECT_GE(logs.count(": " + label + " (forced)") + logs.count(": default (forced)"), 1u)
        << logs.all();
  }
}

TEST(CudaInductor, SymbolicSizesOneCompilationForEverySize) {
  REQUIRE_GPU();
  CompileOptions options;
  options.dynamic = true;
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{softmax(in[0] * 2, -1), in[0].sum(0)};
  };
  auto compiled = compile(f, options);
  testing::LogCapture logs("recompiles,perf_hints");
  for (int64_t rows : {5, 17, 1000}) {
    for (int64_t columns : {3, 64, 2500}) {
      const Tensor x = sample({rows, columns}, DType::Float32, static_cast<uint64_t>(rows));
      const std::vector<Tensor> got = compiled(std::vector<Tensor>{gpu(x)});
      const std::vector<Tensor> want = f({x});
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_TRUE(all_close(cpu(got[i]), want[i], 1e-5, 1e-5))
            << rows << "x" << columns << " output " << i;
      }
    }
  }
  EXPECT_EQ(logs.count("recompil"), 0u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

TEST(CudaInductor, ReduceOverheadKeepsResultsApart) {
  REQUIRE_GPU();
  CompileOptions options;
  options.mode = "reduce-overhead";
  auto compiled = compile(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{(in[0].exp() + 1).log().sum(-1) * 2};
      },
      options);
  const Tensor a = sample({50, 70}, DType::Float32, 17), b = sample({50, 70}, DType::Float32, 18);
  const Tensor ra = compiled(std::vector<Tensor>{gpu(a)})[0];
  const Tensor rb = compiled(std::vector<Tensor>{gpu(b)})[0];
  EXPECT_TRUE(all_close(cpu(ra), ((a.exp() + 1).log().sum(-1) * 2), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(cpu(rb), ((b.exp() + 1).log().sum(-1) * 2), 1e-5, 1e-5));
}

// Every op-info sample that eager accepts on the CPU, run on the GPU (eagerly, or compiled as
// one function per sample) against the op on the CPU. An op that needs a kernel kiln has no CUDA
// version of yet (an extern call: gather, sort, convolution, ...) is listed, not failed; what runs
// must match. Returns the samples compared.
size_t sweep_op_info_on_gpu(bool compiled) {
  autograd::NoGradGuard no_grad;
  size_t matched = 0;
  std::map<std::string, std::string> not_on_gpu;  // op -> the first reason
  for (const ops::OpDef* op : ops::OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples || op->is_random) continue;
    SCOPED_TRACE(op->full_name());
    for (const ops::Sample& sample_args : op->samples()) {
      std::vector<Tensor> cpu_in, gpu_in;
      for (const ops::IValue& v : sample_args.args) {
        if (v.is_tensor() && v.to_tensor().defined()) cpu_in.push_back(v.to_tensor());
      }
      auto run = [op, &sample_args](const std::vector<Tensor>& in) {
        ops::Stack a = sample_args.args;
        size_t pos = 0;
        for (ops::IValue& v : a) {
          if (v.is_tensor() && v.to_tensor().defined()) v = ops::IValue(in.at(pos++));
        }
        return ops::call(*op, std::move(a));
      };
      std::vector<Tensor> want;
      try {
        want = run(cpu_in);
      } catch (const Error&) {
        continue;  // error samples are the op tests' business
      }
      if (testing::uninitialized_output(*op)) continue;
      if (cpu_in.empty()) continue;  // a factory of CPU tensors: nothing moves to the GPU
      for (const Tensor& t : cpu_in) gpu_in.push_back(gpu(t));
      std::vector<Tensor> got;
      try {
        got = compiled ? compile(run)(gpu_in) : run(gpu_in);
      } catch (const Error& e) {
        const std::string what = e.what();
        if (what.find("no kernel for device cuda") != std::string::npos) {
          not_on_gpu.emplace(op->full_name(), what.substr(0, 300));
          continue;
        }
        ADD_FAILURE() << (compiled ? "compiled" : "eager") << " on the GPU: " << what;
        continue;
      }
      EXPECT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
        if (!want[i].defined()) continue;
        const Tensor back = cpu(got[i]);
        if (!is_floating_point(want[i].dtype())) {
          EXPECT_TRUE(same_values(back, want[i]))
              << "output " << i << ": " << sample_args.description;
          continue;
        }
        const bool half = want[i].dtype() == DType::Float16 || want[i].dtype() == DType::BFloat16;
        const double rtol = half ? 1e-2 : std::max(1e-5, op->sample_rtol);
        const double atol = half ? 1e-2 : std::max(1e-6, op->sample_atol);
        EXPECT_TRUE(all_close(back, want[i], rtol, atol))
            << "output " << i << ": " << sample_args.description;
      }
      ++matched;
    }
  }
  std::cerr << matched << " samples matched on the GPU (" << (compiled ? "compiled" : "eager")
            << "); " << not_on_gpu.size() << " ops need CUDA kernels kiln does not have yet:";
  for (const auto& [name, why] : not_on_gpu) std::cerr << " " << name;
  std::cerr << "\n";
  // KILN_CUDA_SWEEP_REASONS=1: why each of them does not run.
  if (std::getenv("KILN_CUDA_SWEEP_REASONS") != nullptr) {
    for (const auto& [name, why] : not_on_gpu) std::cerr << "  " << name << ": " << why << "\n";
  }
  return matched;
}

TEST(CudaInductor, OpInfoSamplesCompiledMatchTheCpu) {
  REQUIRE_GPU();
  EXPECT_GT(sweep_op_info_on_gpu(/*compiled=*/true), 0u);
}

// The eager op-info suite on CUDA: hand-written kernels and generated ones
// (generated_eager_kernel.h) alike.
TEST(CudaGeneratedKernels, OpInfoSamplesEagerMatchTheCpu) {
  REQUIRE_GPU();
  EXPECT_GT(sweep_op_info_on_gpu(/*compiled=*/false), 0u);
}

// Ops without a hand-written CUDA kernel run eagerly through generated ones: pointwise,
// reductions, factories, a composite of several; in-place and out= variants write the caller's
// tensor; a second call of the same signature compiles nothing.
TEST(CudaGeneratedKernels, EagerOpsWithoutHandWrittenKernels) {
  REQUIRE_GPU();
  const Tensor x = sample({6, 50}, DType::Float32, 20);
  const Tensor g = gpu(x);
  EXPECT_TRUE(all_close(cpu(g.erf()), x.erf(), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(cpu(g.amax(-1)), x.amax(-1), 0, 0));
  EXPECT_TRUE(all_close(cpu(softmax(g, -1)), softmax(x, -1), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(cpu(ones_like(g)), ones_like(x), 0, 0));
  EXPECT_TRUE(all_close(cpu(g.pow(2.5) + 1), x.pow(2.5) + 1, 1e-5, 1e-6));
  Tensor inplace = gpu(x);
  inplace.erf_();
  EXPECT_TRUE(all_close(cpu(inplace), x.erf(), 1e-5, 1e-6));
  const size_t before = inductor::cuda_compilation_count();
  EXPECT_TRUE(all_close(cpu(gpu(x).erf()), x.erf(), 1e-5, 1e-6));
  EXPECT_EQ(inductor::cuda_compilation_count(), before);
}

}  // namespace
}  // namespace kiln
