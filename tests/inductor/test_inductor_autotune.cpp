// max-autotune in the CPU inductor: results equal eager with the timed choices and with every
// forced variant (forward and backward); small matmuls as extern calls or generated kernels; the
// winners file written, reused by a later compilation without timing, and rewritten when
// corrupted; a kernel updating a buffer in place never timed on it; variants generated only where
// their code differs, the default functions unchanged.
#include "capture/capture_test_util.h"
#include "inductor/autotune.h"
#include "inductor/code_cache.h"
#include "inductor/codegen_cpp.h"
#include "inductor/compiled_program.h"
#include "inductor/inductor_test_util.h"
#include "inductor/kernel_variants.h"
#include "inductor/mlp_training_check.h"
#include "test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::all_close;
using testing::LogCapture;

CompileOptions max_autotune(std::map<std::string, std::string> options = {}) {
  return {
      .mode = "max-autotune", .backend = std::string("inductor"), .options = std::move(options)};
}

// Every label options{"autotune_force"} takes.
std::vector<std::string> all_labels() {
  std::vector<std::string> labels = {"default", "extern", "generated"};
  for (const inductor::NestVariant& v : inductor::autotune_variants()) labels.push_back(v.label);
  return labels;
}

// The winners files under a cache folder.
std::vector<fs::path> winners_files(const fs::path& cache) {
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("autotune-") && name.ends_with("-threads.json")) found.push_back(e.path());
  }
  return found;
}

// Pointwise chains (a [64, 300] one, parallel by rows, and a 1-D one of 50000 values cut into
// chunks), reductions (per row and of everything), softmax, layer norm, and small matmuls (mm,
// and addmm from mm + bias) with their gradients.
struct Workload {
  Tensor x, y, w, b, m;
  static Workload make() {
    manual_seed(21);
    return {randn({64, 300}), randn({50000}), randn({300}), randn({300}), randn({300, 12}) * 0.1};
  }
  // A lambda: compile() takes callables, not references to functions.
  static constexpr auto body = [](const Tensor& x, const Tensor& y, const Tensor& w,
                                  const Tensor& b, const Tensor& m) {
    Tensor chain = ((x * 1.5 + 0.25).sigmoid() * x.tanh()).exp() - 1.0;
    Tensor flat = ((y * 0.5).sin() + y.abs().sqrt()).square();
    Tensor norm = layer_norm(x, {300}, w, b, 1e-5);
    Tensor probs = x.softmax(-1);
    Tensor product = norm.matmul(m) + b.narrow(0, 0, 12);  // addmm
    Tensor loss = chain.sum() * 1e-3 + flat.sum() * 1e-4 + (probs * x).sum() +
                  product.square().mean() + norm.amax(1).sum();
    return std::make_tuple(chain, flat, norm, probs, product, loss);
  };
};

// Runs the workload compiled with `options` and eagerly, forward and backward (gradients of x, w
// and m), and expects the same values.
void expect_matches_eager(const CompileOptions& options, const std::string& what) {
  const Workload in = Workload::make();
  auto f = compile(Workload::body, options);
  const auto leaves = [&in] {
    return std::vector<Tensor>{in.x.clone().requires_grad_(), in.w.clone().requires_grad_(),
                               in.m.clone().requires_grad_()};
  };
  for (int call = 0; call < 2; ++call) {  // the first call times, the second uses the winners
    std::vector<Tensor> e = leaves(), c = leaves();
    auto want = Workload::body(e[0], in.y, e[1], in.b, e[2]);
    auto got = f(c[0], in.y, c[1], in.b, c[2]);
    EXPECT_TRUE(all_close(std::get<0>(got), std::get<0>(want), 1e-5, 1e-5)) << what << call;
    EXPECT_TRUE(all_close(std::get<1>(got), std::get<1>(want), 1e-5, 1e-5)) << what << call;
    EXPECT_TRUE(all_close(std::get<2>(got), std::get<2>(want), 1e-4, 1e-5)) << what << call;
    EXPECT_TRUE(all_close(std::get<3>(got), std::get<3>(want), 1e-5, 1e-6)) << what << call;
    EXPECT_TRUE(all_close(std::get<4>(got), std::get<4>(want), 1e-4, 1e-5)) << what << call;
    EXPECT_TRUE(all_close(std::get<5>(got), std::get<5>(want), 1e-4, 1e-5)) << what << call;
    std::get<5>(want).backward();
    std::get<5>(got).backward();
    for (size_t i = 0; i < e.size(); ++i) {
      EXPECT_TRUE(all_close(c[i].grad(), e[i].grad(), 1e-4, 1e-5))
          << what << " call " << call << " gradient " << i;
    }
  }
}

TEST(InductorAutotune, TimedChoicesMatchEagerForwardAndBackward) {
  LogCapture logs("fusion,perf_hints");
  expect_matches_eager(max_autotune(), "timed");
  // The choices were timed, or read from the winners file of an earlier run.
  EXPECT_GT(logs.count("autotune kernel"), 0u) << logs.all();
  EXPECT_GT(logs.count("autotune extern addmm"), 0u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

TEST(InductorAutotune, EveryForcedVariantMatchesEager) {
  for (const std::string& label : all_labels()) {
    LogCapture logs("fusion,perf_hints");
    expect_matches_eager(max_autotune({{"autotune_force", label}}), label);
    // The variant exists in this workload and ran.
    EXPECT_GT(logs.count(": " + label + " (forced)"), 0u) << label << "\n" << logs.all();
    EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  }
}

TEST(InductorAutotune, AnUnknownForcedVariantIsAnError) {
  auto f = compile([](const Tensor& x) { return x + 1.0; },
                   max_autotune({{"autotune_force", "fastest"}}));
  try {
    f(ones({4}));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fastest"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("one_thread"), std::string::npos) << e.what();
  }
}

// mm, bmm and baddbmm (bmm + bias), with transposed operands (strided loads), as extern calls and
// as generated kernels; a product above the threshold stays an extern call.
TEST(InductorAutotune, SmallMatmulsAsExternOrGeneratedMatchEager) {
  auto body = [](const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d,
                 const Tensor& big) {
    Tensor mm = a.matmul(b);                                   // [12, 20] x [20, 9]
    Tensor mmt = b.transpose(0, 1).matmul(a.transpose(0, 1));  // transposed operands
    Tensor bmm = c.bmm(d) + d.narrow(1, 0, 1);                 // baddbmm
    Tensor large = big.matmul(big);                            // 80^3 > 2^18
    return std::make_tuple(mm, mmt, bmm, large);
  };
  manual_seed(22);
  const Tensor a = randn({12, 20}), b = randn({20, 9}), c = randn({3, 5, 7}), d = randn({3, 7, 6});
  const Tensor big = randn({80, 80});
  const auto want = body(a, b, c, d, big);
  for (const std::string force : {"", "extern", "generated"}) {
    LogCapture logs("fusion");
    auto f = compile(body, max_autotune(force.empty() ? std::map<std::string, std::string>{}
                                                      : std::map<std::string, std::string>{
                                                            {"autotune_force", force}}));
    autograd::NoGradGuard no_grad;
    for (int call = 0; call < 2; ++call) {
      const auto got = f(a, b, c, d, big);
      EXPECT_TRUE(all_close(std::get<0>(got), std::get<0>(want), 1e-5, 1e-5)) << force;
      EXPECT_TRUE(all_close(std::get<1>(got), std::get<1>(want), 1e-5, 1e-5)) << force;
      EXPECT_TRUE(all_close(std::get<2>(got), std::get<2>(want), 1e-5, 1e-5)) << force;
      EXPECT_TRUE(all_close(std::get<3>(got), std::get<3>(want), 1e-4, 1e-4)) << force;
    }
    EXPECT_EQ(logs.count("autotune extern mm "), 2u) << logs.all();
    EXPECT_EQ(logs.count("autotune extern baddbmm "), 1u) << logs.all();
    EXPECT_EQ(logs.count("[80, 80]"), 0u) << "a large product has no generated alternative\n"
                                          << logs.all();
  }
}

TEST(InductorAutotune, MlpTrainingMatchesEager) {
  for (const std::string force : {"", "generated"}) {
    kiln::testing::expect_mlp_training_matches_eager(
        max_autotune(force.empty() ? std::map<std::string, std::string>{}
                                   : std::map<std::string, std::string>{{"autotune_force", force}}),
        force);
  }
}

// Softmax writes its exponentials into the output and scales them there: each run writes the row
// anew before updating it, so its nest is timed like any other (not kept as an in-place update).
TEST(InductorAutotune, ARowRewrittenEachRunIsTimed) {
  // A cache of its own: a winners file from an earlier run would skip the timing.
  kiln::testing::TemporaryFolder cache;
  kiln::testing::ScopedEnv env("KILN_CACHE_DIR", cache.path().string());
  LogCapture logs("fusion");
  auto body = [](const Tensor& x) { return x.softmax(-1); };
  auto f = compile(body, max_autotune());
  manual_seed(25);
  const Tensor x = randn({64, 300});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close(f(x), body(x), 1e-5, 1e-6));
  EXPECT_EQ(logs.count("in place"), 0u) << logs.all();
  EXPECT_GE(logs.count(" us -> "), 1u) << logs.all();
}

TEST(InductorAutotune, WinnersAreKeptReusedAndRewrittenWhenCorrupted) {
  kiln::testing::TemporaryFolder cache;
  kiln::testing::ScopedEnv env("KILN_CACHE_DIR", cache.path().string());
  // A constant of this run in the code: a source (and cache key) no other test or run has.
  const double c = 1.0 + static_cast<double>(
                             std::chrono::steady_clock::now().time_since_epoch().count() % 100000) *
                             1e-7;
  auto body = [c](const Tensor& x, const Tensor& m) {
    return std::make_tuple((x * c).exp().sum(1), x.matmul(m));
  };
  manual_seed(23);
  const Tensor x = randn({40, 24}), m = randn({24, 8});
  const auto want = body(x, m);
  autograd::NoGradGuard no_grad;
  const auto run = [&](const char* what) {
    auto f = compile(body, max_autotune());
    const auto got = f(x, m);
    EXPECT_TRUE(all_close(std::get<0>(got), std::get<0>(want), 1e-5, 1e-5)) << what;
    EXPECT_TRUE(all_close(std::get<1>(got), std::get<1>(want), 1e-5, 1e-5)) << what;
  };

  const size_t compiled = inductor::compilation_count(), timed = inductor::autotune_timings();
  run("first compilation");
  EXPECT_EQ(inductor::compilation_count(), compiled + 1);
  EXPECT_GT(inductor::autotune_timings(), timed);
  const std::vector<fs::path> files = winners_files(cache.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename().string(),
            fmt::format("autotune-{}-threads.json", inductor::autotune_threads()));
  const auto read =
      inductor::read_winners(files[0], inductor::this_machine(), inductor::autotune_threads());
  ASSERT_TRUE(read.winners.has_value());
  EXPECT_FALSE(read.malformed.has_value());
  // A site per distinct kernel with variants and the matmul's extern-or-generated choice.
  EXPECT_GE(read.winners->size(), 2u);
  EXPECT_EQ(std::count_if(read.winners->begin(), read.winners->end(),
                          [](const auto& w) { return w.first.starts_with("extern mm "); }),
            1);

  {  // A recompilation (same source): the module and the winners are reused, nothing timed.
    LogCapture logs("fusion");
    const size_t compiled_before = inductor::compilation_count();
    const size_t timed_before = inductor::autotune_timings();
    run("recompilation");
    EXPECT_EQ(inductor::compilation_count(), compiled_before);
    EXPECT_EQ(inductor::autotune_timings(), timed_before);
    EXPECT_EQ(logs.count("winners read from"), 1u) << logs.all();
  }
  // Cut short; and whole but naming a variant a kernel does not have.
  const auto kernel = std::find_if(read.winners->begin(), read.winners->end(),
                                   [](const auto& w) { return w.first.starts_with("kernel"); });
  ASSERT_NE(kernel, read.winners->end());
  const std::string whole_but_wrong =
      fmt::format(R"({{"format": "kiln autotune winners 1", "machine": "{}", "threads": {}, )"
                  R"("winners": {{"{}": "no_such_variant"}}}})",
                  inductor::this_machine(), inductor::autotune_threads(), kernel->first);
  for (const std::string& corrupt :
       {std::string(R"({"format": "kiln autotune wi)"), whole_but_wrong,
        // Found by fuzz_autotune_winners: a format that is no string threw json's type_error.
        std::string(R"({"format": {"gemm_0": "extern"}})")}) {
    std::ofstream(files[0], std::ios::trunc) << corrupt;
    LogCapture logs("perf_hints");
    const size_t timed_before = inductor::autotune_timings();
    run("corrupted winners");
    EXPECT_EQ(logs.count("is malformed"), 1u) << corrupt << "\n" << logs.all();
    EXPECT_GT(inductor::autotune_timings(), timed_before) << corrupt;
    const auto rewritten =
        inductor::read_winners(files[0], inductor::this_machine(), inductor::autotune_threads());
    ASSERT_TRUE(rewritten.winners.has_value()) << corrupt;
    // The same sites (the winners may differ: timings vary).
    ASSERT_EQ(rewritten.winners->size(), read.winners->size()) << corrupt;
    EXPECT_TRUE(std::equal(rewritten.winners->begin(), rewritten.winners->end(),
                           read.winners->begin(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }))
        << corrupt;
  }
}

// A program whose middle kernel adds 1 to buf1 in place (as no lowering makes yet): timing it
// by running it repeatedly would add 1 several times.
inductor::Program in_place_program(int64_t n) {
  using namespace inductor;
  Program p;
  const auto buffer = [&p, n](Buffer::Role role) {
    Buffer b;
    b.sizes = {n};
    b.strides = {1};
    b.role = role;
    b.name = fmt::format("buf{}", p.buffers.size());
    p.buffers.push_back(b);
  };
  buffer(Buffer::Role::Input);
  p.buffers[0].input = 0;
  p.num_inputs = 1;
  buffer(Buffer::Role::Intermediate);
  buffer(Buffer::Role::Intermediate);
  const auto pointwise = [&p](int out, Expr body) {
    Kernel k;
    k.ranges = {p.buffers[0].sizes[0]};
    k.body = std::move(body);
    k.output = out;
    k.store = var(0);
    LoopNest nest;
    nest.parts.push_back(std::move(k));
    p.steps.emplace_back(std::move(nest));
  };
  const auto at = [](int b) { return load(b, var(0), DType::Float32); };
  pointwise(1, call("mul", {at(0), constant_of(2, DType::Float32)}, DType::Float32));
  pointwise(1, call("add", {at(1), constant_of(1, DType::Float32)}, DType::Float32));
  pointwise(2, at(1));
  p.outputs.push_back({.buffer = 2, .sizes = {n}, .strides = {1}, .offset = 0});
  return p;
}

// A CUDA source's winners live in a folder of their own under the cache (no module is there):
// the first write makes it, private, and the winners read back.
TEST(InductorAutotune, WinnersMakeTheirFolderAtTheFirstWrite) {
  kiln::testing::TemporaryFolder cache;
  const fs::path file =
      cache.path() / "cuda" / "autotune" / "key-model" / "autotune-1-threads.json";
  inductor::write_winners(file, {{"kernel0", "t512"}}, inductor::this_machine(), 1);
  EXPECT_EQ(fs::status(file.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  const auto read = inductor::read_winners(file, inductor::this_machine(), 1);
  ASSERT_TRUE(read.winners.has_value());
  EXPECT_EQ(read.winners->at("kernel0"), "t512");
}

TEST(InductorAutotune, AnInPlaceKernelIsNotTimed) {
  LogCapture logs("fusion");
  inductor::Program program = in_place_program(100000);
  const std::string source =
      inductor::generate_cpp(program,
                             {.kernel_variants = true, .streaming_store_bytes = std::nullopt})
          .joined();
  // The in-place kernel has variants to time (the chunked parallel loop).
  ASSERT_FALSE(std::get<inductor::LoopNest>(program.steps[1]).variants.empty());
  auto module =
      inductor::load_or_compile(source, inductor::CompilerConfig::from_environment(),
                                inductor::compile_arguments(), "the in-place test program");
  inductor::AutotuneSettings settings;
  settings.enabled = true;
  settings.graph_name = "in-place";
  const inductor::CompiledProgram compiled(program, inductor::cpu_kernels(module), false, settings);
  manual_seed(24);
  const Tensor x = randn({100000});
  autograd::NoGradGuard no_grad;
  for (int call = 0; call < 2; ++call) {
    EXPECT_TRUE(all_close(compiled.run(std::vector<Tensor>{x})[0], x * 2.0 + 1.0, 0, 0)) << call;
  }
  EXPECT_EQ(logs.count("updates buf1 in place"), 1u) << logs.all();
  // The other kernels were timed.
  EXPECT_EQ(logs.count(" us -> "), 2u) << logs.all();
}

TEST(InductorAutotune, VariantsOnlyWhereTheirCodeDiffersAndDefaultsUnchanged) {
  inductor::Program small = in_place_program(100);
  inductor::Program tuned = small;
  const std::string plain = inductor::generate_cpp(small).joined();
  const std::string variants =
      inductor::generate_cpp(tuned,
                             {.kernel_variants = true, .streaming_store_bytes = std::nullopt})
          .joined();
  // The default functions are the same text with and without variants.
  EXPECT_TRUE(variants.starts_with(plain.substr(0, plain.find("extern \"C\" void kernel"))));
  for (size_t at = plain.find("\nextern \"C\" void"); at != std::string::npos;
       at = plain.find("\nextern \"C\" void", at + 1)) {
    const size_t end = plain.find("\n}\n", at);
    EXPECT_NE(variants.find(plain.substr(at, end - at)), std::string::npos);
  }
  // 100 elements: one thread and no chunks in any case; only the compiler's own vectors differ.
  for (const inductor::Step& step : tuned.steps) {
    const auto& nest = std::get<inductor::LoopNest>(step);
    ASSERT_EQ(nest.variants.size(), 1u) << nest.function;
    EXPECT_EQ(nest.variants[0].label, "compiler_simd");
  }
  EXPECT_EQ(plain.find("compiler_simd"), std::string::npos);
}

}  // namespace
}  // namespace kiln
