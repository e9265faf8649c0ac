// The CUDA code generator without a GPU: every op-info sample's graph of prims, lowered and
// scheduled for a CUDA device, generates a source that NVRTC compiles for sm_90 (the H100/H200).
// Needs the CUDA toolkit's NVRTC, not a device; skipped in builds without CUDA. Running the
// kernels is test_cuda_inductor.cpp's business (on a GPU).
#include "capture/capture_test_util.h"
#include "cuda/cuda_test_util.h"
#include "cuda/runtime_compile.h"
#include "inductor/codegen_cuda.h"
#include "inductor/cuda_kernels.h"
#include "inductor/inductor_test_util.h"
#include "inductor/lowering.h"
#include "inductor/reduction_splitting.h"
#include "inductor/scheduler.h"

#include <kiln/aot/aot.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <set>

namespace kiln {
namespace {

bool have_nvrtc() {
  try {
    cuda::compiler_version();
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The kernels of a graph of prims lowered and scheduled for cuda:0 (the source without its
// prelude), or nullopt when the graph is not generated (a dtype without kernels: it runs with the
// interpreter).
std::optional<std::string> generated_kernels(const graph::Graph& graph, const std::string& name) {
  inductor::Program program;
  try {
    program = inductor::lower(graph);
  } catch (const Error&) {
    return std::nullopt;
  }
  program.device = Device::cuda();
  program = inductor::schedule(std::move(program), name);
  const bool has_kernels =
      std::any_of(program.steps.begin(), program.steps.end(),
                  [](const inductor::Step& s) { return !inductor::loop_nests(s).empty(); });
  if (!has_kernels) return std::nullopt;
  inductor::CudaSource source;
  try {
    source = inductor::generate_cuda(program);
  } catch (const Error& e) {
    ADD_FAILURE() << name << ": " << e.what();
    return std::nullopt;
  }
  for (const auto& [kernel, launch] : source.launches) {
    EXPECT_TRUE(launch.threads % 32 == 0 && launch.threads > 0 && launch.threads <= 512)
        << name << " " << kernel << ": " << launch.threads << " threads";
  }
  return source.text;
}

// Sources of several graphs compiled as one NVRTC program (much faster than one each): one
// prelude, each graph's kernels renamed g<k>_kernel<n>.
class Batches {
 public:
  void add(const std::string& source, const std::string& name) {
    const size_t body = source.find("\nstruct kernel");
    ASSERT_NE(body, std::string::npos) << name;
    if (prelude_.empty()) prelude_ = source.substr(0, body);
    if (!seen_.insert(source.substr(body)).second) return;
    const std::string renamed = std::regex_replace(
        source.substr(body), std::regex("\\bkernel([0-9]+)"), fmt::format("g{}_kernel$1", count_));
    pending_.push_back({name, renamed});
    ++count_;
    if (pending_.size() == 64) flush();
  }
  // Compiles what is pending; a batch NVRTC rejects is compiled graph by graph to name the one.
  void flush() {
    if (pending_.empty()) return;
    std::string text = prelude_;
    for (const auto& [name, kernels] : pending_) text += kernels;
    try {
      EXPECT_FALSE(cuda::compile_to_cubin(text, "sm_90", "op-info batch").empty());
    } catch (const Error&) {
      for (const auto& [name, kernels] : pending_) {
        try {
          cuda::compile_to_cubin(prelude_ + kernels, "sm_90", name);
        } catch (const Error& e) {
          ADD_FAILURE() << name << ": " << e.what() << "\nkernels:\n" << kernels;
        }
      }
    }
    pending_.clear();
  }
  size_t count() const { return count_; }

 private:
  std::string prelude_;
  std::set<std::string> seen_;
  std::vector<std::pair<std::string, std::string>> pending_;
  size_t count_ = 0;
};

TEST(CudaCodegen, OpInfoGraphsCompileWithNvrtc) {
  if (!have_nvrtc()) GTEST_SKIP() << "kiln was built without CUDA (no NVRTC)";
  Batches batches;
  std::string current;
  auto capture = [&](const graph::Graph& graph, std::span<const Tensor>,
                     const BackendContext& context) -> CompiledGraph {
    const std::string name = current + " " + context.graph_name;
    if (auto kernels = generated_kernels(graph, name)) batches.add(*kernels, name);
    auto owned = std::make_shared<const graph::Graph>(graph.clone());
    return [owned](std::span<const Tensor> inputs) { return graph::interpret(*owned, inputs); };
  };
  CompileOptions options;
  options.backend = aot::aot_autograd(
      {.forward_compiler = capture, .backward_compiler = capture, .decompose = true});
  autograd::NoGradGuard no_grad;
  for (const ops::OpDef* op : ops::OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples) continue;
    std::vector<ops::Stack> samples;
    for (const ops::Sample& s : op->samples()) samples.push_back(s.args);
    current = op->name();
    SCOPED_TRACE(op->full_name());
    for (const ops::Stack& args : samples) {
      std::vector<Tensor> tensors;
      for (const ops::IValue& v : args) {
        if (v.is_tensor() && v.to_tensor().defined()) tensors.push_back(v.to_tensor());
      }
      auto run = [op, &args](const std::vector<Tensor>& in) {
        ops::Stack a = args;
        size_t pos = 0;
        for (ops::IValue& v : a) {
          if (v.is_tensor() && v.to_tensor().defined()) v = ops::IValue(in.at(pos++));
        }
        return ops::call(*op, std::move(a));
      };
      try {
        compile(run, options)(tensors);
      } catch (const Error&) {
        // Samples eager refuses (error samples) are the op tests' business.
      }
    }
  }
  batches.flush();
  std::cerr << batches.count() << " distinct graphs generated and compiled by NVRTC\n";
  EXPECT_GT(batches.count(), 200u);
}

// The CUDA sources of the forward graphs `f` compiles to, run on `inputs` (CPU tensors:
// lowered and scheduled for cuda:0, generated (with max-autotune's variants when `variants`),
// and interpreted on the CPU).
template <typename F, typename... Inputs>
std::vector<inductor::CudaSource> cuda_sources_with(bool variants, F f, const Inputs&... inputs) {
  std::vector<inductor::CudaSource> sources;
  auto capture = [&](const graph::Graph& graph, std::span<const Tensor>,
                     const BackendContext& context) -> CompiledGraph {
    inductor::Program program = inductor::lower(graph);
    program.device = Device::cuda();
    program = inductor::schedule(std::move(program), context.graph_name);
    sources.push_back(inductor::generate_cuda(program, variants));
    auto owned = std::make_shared<const graph::Graph>(graph.clone());
    return [owned](std::span<const Tensor> in) { return graph::interpret(*owned, in); };
  };
  CompileOptions options;
  options.backend = aot::aot_autograd({.forward_compiler = capture, .decompose = true});
  autograd::NoGradGuard no_grad;
  compile(f, options)(inputs...);
  return sources;
}

template <typename F, typename... Inputs>
std::vector<inductor::CudaSource> cuda_sources_of(F f, const Inputs&... inputs) {
  return cuda_sources_with(false, f, inputs...);
}

// A flat kernel over a static count below 2^30 indexes and unravels in 32 bits (64-bit divisions
// are emulated: resnet18's batch norm + ReLU over 25.7M elements spent 129 us in them).
TEST(CudaCodegen, FlatKernelsIndexIn32BitsWhereTheirCountIsSmall) {
  auto f = [](const Tensor& x, const Tensor& scale) { return (x * scale).relu(); };
  const std::vector<inductor::CudaSource> sources =
      cuda_sources_of(f, randn({4, 8, 6, 5}), randn({8, 1, 1}));
  ASSERT_EQ(sources.size(), 1u);
  const std::string& text = sources[0].text;
  EXPECT_NE(text.find("for (int x = "), std::string::npos) << text;
  // The channel index, a 32-bit remainder, reads the scale.
  EXPECT_NE(text.find("const int i"), std::string::npos) << text;
  EXPECT_EQ(text.find("int64_t rest"), std::string::npos) << text;
  if (have_nvrtc()) {
    EXPECT_FALSE(cuda::compile_to_cubin(text, "sm_90", "index width").empty());
  }
}

// max-autotune's variants: a flat kernel's are launches of its own code (128, 512, 1024 threads;
// a quarter of the blocks), a block kernel's are its code written for other thread counts; the
// whole source compiles with NVRTC; nests share variants as they share kernels.
TEST(CudaCodegen, MaxAutotuneVariantsAreLaunchesOrRewrittenBlockKernels) {
  auto f = [](const Tensor& x, const Tensor& y) {
    return std::make_tuple((y.sin() * 2.0).relu(), softmax(x, -1));
  };
  const std::vector<inductor::CudaSource> sources =
      cuda_sources_with(true, f, randn({64, 300}), randn({5000}));
  ASSERT_EQ(sources.size(), 1u);
  const inductor::CudaSource& source = sources[0];
  int flat = 0, block = 0;
  for (const auto& [name, launch] : source.launches) {
    if (name.find('_') != std::string::npos) continue;  // a variant: <kernel>_<label>
    using Form = inductor::CudaLaunch::Form;
    if (launch.form == Form::Flat) {
      ++flat;
      // Launched with up to 1024 threads: bounds of 256 made those launches fail on the GPU.
      EXPECT_NE(source.text.find(fmt::format("__launch_bounds__(1024) {}(", name)),
                std::string::npos)
          << name;
      const int64_t blocks = launch.blocks.constant_value().value();
      // Variants cover the same elements: blocks x threads at least the default's.
      for (const auto& [label, threads, want] : {std::tuple{"t128", 128, 2 * blocks},
                                                 {"t512", 512, (blocks + 1) / 2},
                                                 {"t1024", 1024, (blocks + 3) / 4},
                                                 {"t256x4", 256, (blocks + 3) / 4}}) {
        const auto it = source.launches.find(name + "_" + label);
        ASSERT_NE(it, source.launches.end()) << name << " " << label << "\n" << source.text;
        EXPECT_EQ(it->second.symbol, name);
        EXPECT_EQ(it->second.threads, threads);
        EXPECT_EQ(it->second.blocks.constant_value(), std::optional<int64_t>(want)) << label;
      }
    } else if (launch.form == Form::Block) {
      ++block;
      for (int threads : {128, 256, 512, 1024}) {
        if (threads == launch.threads) continue;
        const std::string variant = fmt::format("{}_t{}", name, threads);
        const auto it = source.launches.find(variant);
        ASSERT_NE(it, source.launches.end()) << variant;
        EXPECT_TRUE(it->second.symbol.empty()) << variant;  // code of its own
        EXPECT_EQ(it->second.threads, threads);
        EXPECT_NE(source.text.find(fmt::format("__launch_bounds__({}) {}(", threads, variant)),
                  std::string::npos)
            << variant;
      }
    }
  }
  EXPECT_GE(flat, 1) << source.text;
  EXPECT_GE(block, 1) << source.text;
  if (have_nvrtc()) {
    EXPECT_FALSE(cuda::compile_to_cubin(source.text, "sm_90", "variants").empty());
  }
}

// Layer norm as training saves it (output, mean and rstd per row) over (batch, seq, hidden): one
// kernel with a block per row (batch x seq), not per batch element (a block looping over a
// hundred rows left most of the GPU idle: 16 blocks in BERT's eager layer norm).
TEST(CudaCodegen, LayerNormWithStatisticsHasABlockPerRow) {
  auto f = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return native_layer_norm(x, {x.size(-1)}, w, b, 1e-5);
  };
  const std::vector<inductor::CudaSource> sources =
      cuda_sources_of(f, randn({4, 24, 96}), randn({96}), randn({96}));
  ASSERT_EQ(sources.size(), 1u);
  ASSERT_EQ(sources[0].launches.size(), 1u) << sources[0].text;
  const inductor::CudaLaunch& launch = sources[0].launches.begin()->second;
  EXPECT_EQ(launch.blocks.constant_value(), std::optional<int64_t>(4 * 24)) << sources[0].text;
}

// A bias gradient's sum over rows ([2048, 768].sum(0)) is a column-form kernel: a block per 8
// features (96 blocks), its threads' lanes on consecutive features; a sum along the rows
// ([768, 2048].sum(1)) keeps a block per row.
TEST(CudaCodegen, SumsOverRowsTakeTheColumnForm) {
  for (const bool over_rows : {true, false}) {
    auto f = [over_rows](const Tensor& x) { return over_rows ? x.sum(0) : x.sum(1); };
    const std::vector<inductor::CudaSource> sources =
        cuda_sources_of(f, over_rows ? randn({2048, 768}) : randn({768, 2048}));
    ASSERT_EQ(sources.size(), 1u);
    ASSERT_EQ(sources[0].launches.size(), 1u) << sources[0].text;
    const inductor::CudaLaunch& launch = sources[0].launches.begin()->second;
    const bool column = sources[0].text.find("tile * 8 + lane") != std::string::npos;
    EXPECT_EQ(column, over_rows) << sources[0].text;
    EXPECT_EQ(launch.blocks.constant_value(), std::optional<int64_t>(over_rows ? 96 : 768))
        << sources[0].text;
  }
}

// Kernels with thousands of elements per iteration of few shared loops stay apart on a GPU, each
// a flat kernel: bert's dropout masks beside its pooler, fused over its batch of 16, ran one
// block per batch row (16 blocks: 3.3 ms on an H100, where apart they take about 0.1 ms). Rows of
// little work still share a nest.
TEST(CudaCodegen, KernelsWithMuchWorkPerRowStayApartOverFewRows) {
  auto f = [](const Tensor& x, const Tensor& y) {
    return std::make_tuple(x.tanh(), y < 0.5, y.sum(-1));
  };
  const std::vector<inductor::CudaSource> sources =
      cuda_sources_of(f, randn({16, 768}), randn({16, 128, 768}));
  ASSERT_EQ(sources.size(), 1u);
  for (const auto& [name, launch] : sources[0].launches) {
    // The row sum alone keeps a block per row (2048 of them); nothing runs 16 blocks.
    EXPECT_NE(launch.blocks.constant_value(), std::optional<int64_t>(16)) << name << "\n"
                                                                          << sources[0].text;
  }
  auto small = [](const Tensor& x, const Tensor& y) { return std::make_tuple(x.tanh(), y * 2); };
  const std::vector<inductor::CudaSource> fused =
      cuda_sources_of(small, randn({16, 64}), randn({16, 8, 64}));
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0].launches.size(), 1u) << fused[0].text;
}

// Batch norm's per-channel sums over [32, 64, 56, 56] ran on 64 blocks (one per channel; 8 in the
// column form of channels-last activations) of an H100's 132 multiprocessors. Split, the partial
// sums run on 1024 blocks (16 chunks of the batch), or in the column form on 784 (98 chunks of
// the merged [N, H, W] loop, tiles of 8 channels), then a small reduction of the partials.
TEST(CudaCodegen, LongReductionsWithFewOutputsRunOnManyBlocks) {
  for (const MemoryFormat format : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
    std::vector<inductor::CudaLaunch> launches;
    auto capture = [&](const graph::Graph& graph, std::span<const Tensor>,
                       const BackendContext& context) -> CompiledGraph {
      inductor::Program program = inductor::lower(graph);
      program.device = Device::cuda();
      EXPECT_EQ(inductor::split_long_reductions(program), 1u);
      program = inductor::schedule(std::move(program), context.graph_name);
      for (const auto& [name, launch] : inductor::generate_cuda(program).launches) {
        launches.push_back(launch);
      }
      auto owned = std::make_shared<const graph::Graph>(graph.clone());
      return [owned](std::span<const Tensor> in) { return graph::interpret(*owned, in); };
    };
    CompileOptions options;
    options.backend = aot::aot_autograd({.forward_compiler = capture, .decompose = true});
    autograd::NoGradGuard no_grad;
    const Tensor x = empty({32, 64, 56, 56}).contiguous(format);
    compile([](const Tensor& x) { return x.sum({0, 2, 3}); }, options)(x);
    ASSERT_EQ(launches.size(), 2u);
    const int64_t wanted = format == MemoryFormat::Contiguous ? 1024 : 784;
    EXPECT_EQ(launches[0].blocks.constant_value(), std::optional<int64_t>(wanted));
  }
}

// A pointwise value read back at the same element by the one later kernel of its nest over the
// same loops is computed in that kernel (a register) instead of a block's shared memory, so the
// nest runs one thread per element: resnet18's batch norm, residual add and ReLU under bfloat16
// autocast ran a block of 32 threads per row of 28 (72 us a kernel on an H100).
TEST(CudaCodegen, PointwiseValuesReadAtTheirElementStayInRegisters) {
  auto f = [](const Tensor& x, const Tensor& y, const Tensor& scale) {
    // Costly enough (exp) that its two reads below get it a buffer.
    const Tensor sum = ((x * scale).exp() + y).to(DType::BFloat16).to(DType::Float32);
    return where(sum < 0, zeros_like(sum), sum).to(DType::BFloat16);
  };
  const std::vector<inductor::CudaSource> sources =
      cuda_sources_of(f, randn({4, 8, 28, 28}), randn({4, 8, 28, 28}), randn({8, 1, 1}));
  ASSERT_EQ(sources.size(), 1u);
  for (const auto& [name, launch] : sources[0].launches) {
    EXPECT_EQ(launch.form, inductor::CudaLaunch::Form::Flat) << name << "\n" << sources[0].text;
  }
  EXPECT_EQ(sources[0].text.find("kiln_shared + 0);"), std::string::npos) << sources[0].text;
}

// The disk cache of cubins: a second request is served from the file without compiling; a
// truncated or corrupted file (its trailing content hash does not match) is reported on
// perf_hints and rebuilt, and the rebuilt entry is whole again.
TEST(CudaCodeCache, CubinsAreReusedAndCorruptedOnesRebuilt) {
  if (!have_nvrtc()) GTEST_SKIP() << "kiln was built without CUDA (no NVRTC)";
  testing::TemporaryFolder folder;
  testing::ScopedEnv cache("KILN_CACHE_DIR", (folder.path() / "cache").string());
  const std::string source =
      "extern \"C\" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  const size_t before = inductor::cuda_compilation_count();
  const std::string cubin = inductor::cached_cubin(source, "sm_90", "the cache test", 1);
  ASSERT_FALSE(cubin.empty());
  EXPECT_EQ(inductor::cuda_compilation_count(), before + 1);
  EXPECT_EQ(inductor::cached_cubin(source, "sm_90", "the cache test", 1), cubin);
  EXPECT_EQ(inductor::cuda_compilation_count(), before + 1);  // from the file
  std::filesystem::path file;
  for (const auto& e : std::filesystem::directory_iterator(folder.path() / "cache" / "cuda")) {
    if (e.path().extension() == ".cubin") file = e.path();
  }
  ASSERT_FALSE(file.empty());
  const auto whole = std::filesystem::file_size(file);
  {
    // A flipped byte in the middle.
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(whole / 2));
    char c = 0;
    f.seekg(static_cast<std::streamoff>(whole / 2));
    f.get(c);
    f.seekp(static_cast<std::streamoff>(whole / 2));
    f.put(static_cast<char>(c ^ 0x5a));
  }
  {
    testing::LogCapture logs("perf_hints");
    EXPECT_EQ(inductor::cached_cubin(source, "sm_90", "the cache test", 1), cubin);
    EXPECT_EQ(logs.count("is corrupted; rebuilding it"), 1u) << logs.all();
  }
  EXPECT_EQ(inductor::cuda_compilation_count(), before + 2);
  EXPECT_EQ(std::filesystem::file_size(file), whole);
  std::filesystem::resize_file(file, 10);
  {
    testing::LogCapture logs("perf_hints");
    EXPECT_EQ(inductor::cached_cubin(source, "sm_90", "the cache test", 1), cubin);
    EXPECT_EQ(logs.count("is truncated; rebuilding it"), 1u) << logs.all();
  }
  EXPECT_EQ(inductor::cuda_compilation_count(), before + 3);
  // A source NVRTC rejects: the error names the kernel's graph and where the source is kept.
  try {
    inductor::cached_cubin("this is not CUDA", "sm_90", "the broken test source", 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the broken test source"), std::string::npos) << what;
    EXPECT_NE(what.find(".cu"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kiln
