// One source's kernels compiled by several compiler processes at once: the split into balanced
// parts, the parts compiled and linked into one module (KILN_COMPILE_THREADS), a failing part named
// in the error with nothing cached, threads and processes building one split entry at once, and a
// generated graph with many kernels compiled in parts against eager.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kiln/kiln.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include "capture/capture_test_util.h"
#include "inductor/code_cache.h"
#include "inductor/inductor_test_util.h"
#include "inductor/kernel_source.h"
#include "test_util.h"

namespace kiln::inductor {
namespace {

namespace fs = std::filesystem;
using kiln::testing::LogCapture;
using kiln::testing::ScopedEnv;
using kiln::testing::TemporaryFolder;
using kiln::testing::throws_error;

using KernelFunction = int (*)(int);

// `count` kernels kiln_f<i>(a) = 2a + i behind a prelude whose helpers have internal linkage, as
// the generated prelude's do; `tag` (in a comment) gives each test its own cache key.
KernelSource kernels_source(const std::string& tag, size_t count) {
  KernelSource source;
  source.prelude = fmt::format("// {} {} {}\n", tag, ::getpid(),
                               std::chrono::steady_clock::now().time_since_epoch().count()) +
                   "namespace {\ntemplate <typename T> inline T kiln_twice(T a) { return a + a; }\n"
                   "}  // namespace\nstatic const int kiln_zero = 0;\n";
  for (size_t i = 0; i < count; ++i) {
    source.functions.push_back(fmt::format(
        "\nextern \"C\" int kiln_f{0}(int a) {{\n  return kiln_twice(a) + kiln_zero + {0};\n}}\n",
        i));
  }
  return source;
}

std::set<std::string> file_names(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.insert(e.path().filename().string());
  return names;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Whether every kernel of `source` is in `module` and computes 2a + i.
::testing::AssertionResult all_kernels_run(const LoadedModule& module, const KernelSource& source) {
  for (size_t i = 0; i < source.functions.size(); ++i) {
    auto f = reinterpret_cast<KernelFunction>(module.symbol(fmt::format("kiln_f{}", i)));
    if (f(5) != 10 + static_cast<int>(i)) {
      return ::testing::AssertionFailure() << "kiln_f" << i << "(5) = " << f(5);
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(KernelSource, JoinedIsThePreludeThenEveryFunctionInOrder) {
  const KernelSource source{.prelude = "P", .functions = {"a", "bb", "c"}};
  EXPECT_EQ(source.joined(), "Pabbc");
  const KernelSource no_functions{.prelude = "P", .functions = {}};
  EXPECT_EQ(no_functions.joined(), "P");
}

TEST(KernelSource, PartsHaveBalancedLengthsAndKeepTheFunctionsInOrder) {
  const KernelSource source{.prelude = "P|",
                            .functions = {"aaaaaa", "b", "cc", "ddd", "eeee", "f"}};
  // Longest first to the shortest part so far (the first of equals): aaaaaa, eeee, ddd to parts
  // 1, 2, 3, then cc to 3, b and f to 2.
  std::vector<size_t> functions;
  EXPECT_EQ(split_into_parts(source, 3, &functions),
            (std::vector<std::string>{"P|aaaaaa", "P|beeeef", "P|ccddd"}));
  EXPECT_EQ(functions, (std::vector<size_t>{1, 3, 2}));
  EXPECT_EQ(split_into_parts(source, 1), std::vector<std::string>{"P|aaaaaabccdddeeeef"});
  // Never more parts than functions, never none.
  EXPECT_EQ(split_into_parts(source, 10).size(), 6u);
  const KernelSource no_functions{.prelude = "P", .functions = {}};
  EXPECT_EQ(split_into_parts(no_functions, 4), std::vector<std::string>{"P"});
}

TEST(KernelSource, OnePartPerMinimumOfFunctionsUpToTheThreads) {
  EXPECT_EQ(part_count(0, 4, 8), 1u);
  EXPECT_EQ(part_count(15, 4, 8), 1u);
  EXPECT_EQ(part_count(16, 4, 8), 2u);
  EXPECT_EQ(part_count(100, 4, 8), 4u);
  EXPECT_EQ(part_count(100, 1, 8), 1u);
  EXPECT_EQ(part_count(3, 4, 0), 3u);
}

// Each test gets an empty cache folder and the default compiler settings.
class ParallelCompile : public ::testing::Test {
 protected:
  ParallelCompile() : cache_env_("KILN_CACHE_DIR", (folder_.path() / "cache").string()) {}

  fs::path entry_of(const KernelSource& source) {
    return cache_entry_dir(cache_key(source.joined(), config_, {}));
  }
  std::shared_ptr<const LoadedModule> load(const KernelSource& source) {
    return load_or_compile(source, config_, {}, "test_graph");
  }

  TemporaryFolder folder_;
  ScopedEnv cache_env_;
  ScopedEnv threads_env_{"KILN_COMPILE_THREADS"};
  CompilerConfig config_ = CompilerConfig::from_environment();
};

TEST_F(ParallelCompile, ManyKernelsAreCompiledInPartsAtOnceAndLinked) {
  threads_env_.set("3");
  const KernelSource source = kernels_source("three parts", 3 * kMinKernelsPerPart);
  LogCapture logs("output_code,compile_progress");
  const size_t builds = compilation_count();
  const size_t processes = compiler_process_count();
  auto module = load(source);
  EXPECT_EQ(compilation_count(), builds + 1);
  EXPECT_EQ(compiler_process_count(), processes + 4);  // three parts and the link
  EXPECT_EQ(logs.count("as 3 translation units at once"), 1u) << logs.all();
  EXPECT_TRUE(all_kernels_run(*module, source));
  // Progress after each part (the prelude precompiled first): 16, 32, then 48 of the 48.
  std::vector<std::string> progress;
  for (const std::string& r : logs.records) {
    if (r.find("kernels compiled") != std::string::npos) progress.push_back(r);
  }
  EXPECT_EQ(progress,
            (std::vector<std::string>{"compile_progress: test_graph: 16 of 48 kernels compiled",
                                      "compile_progress: test_graph: 32 of 48 kernels compiled",
                                      "compile_progress: test_graph: 48 of 48 kernels compiled"}))
      << logs.all();
  EXPECT_EQ(logs.count("precompiling the kernels' prelude"), 1u) << logs.all();

  // The entry: the whole source (its key), the parts beside it (their kernels: the prelude is
  // included precompiled), no temporary objects left.
  const fs::path entry = entry_of(source);
  EXPECT_EQ(file_names(entry),
            (std::set<std::string>{"ok", "module.so", "source.cpp", "source.part1of3.kernels.cpp",
                                   "source.part2of3.kernels.cpp", "source.part3of3.kernels.cpp"}));
  EXPECT_EQ(read_file(entry / "source.cpp"), source.joined());
  KernelSource kernels = source;
  kernels.prelude.clear();
  const std::vector<std::string> parts = split_into_parts(kernels, 3);
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(read_file(entry / fmt::format("source.part{}of3.kernels.cpp", i + 1)), parts[i]);
  }

  // From disk, as another process would: a hit, whatever the thread count now.
  module.reset();
  threads_env_.set("2");
  EXPECT_TRUE(all_kernels_run(*load(source), source));
  EXPECT_EQ(compiler_process_count(), processes + 4);
}

TEST_F(ParallelCompile, OneThreadOrFewKernelsCompileInOneProcess) {
  threads_env_.set("1");
  const KernelSource many = kernels_source("one thread", 3 * kMinKernelsPerPart);
  size_t processes = compiler_process_count();
  LogCapture logs("compile_progress");
  EXPECT_TRUE(all_kernels_run(*load(many), many));
  // One process: none, then all.
  EXPECT_EQ(logs.count("test_graph: 0 of 48 kernels compiled"), 1u) << logs.all();
  EXPECT_EQ(logs.count("test_graph: 48 of 48 kernels compiled"), 1u) << logs.all();
  EXPECT_EQ(compiler_process_count(), processes + 1);
  EXPECT_EQ(file_names(entry_of(many)),
            (std::set<std::string>{"ok", "module.so", "source.cpp", "source.kernels.cpp"}));

  threads_env_.set("3");
  const KernelSource few = kernels_source("few kernels", 2 * kMinKernelsPerPart - 1);
  processes = compiler_process_count();
  EXPECT_TRUE(all_kernels_run(*load(few), few));
  EXPECT_EQ(compiler_process_count(), processes + 1);
}

TEST_F(ParallelCompile, AFailingPartIsNamedAndNothingIsCached) {
  threads_env_.set("2");
  KernelSource broken = kernels_source("broken part", 2 * kMinKernelsPerPart);
  broken.functions[3] = "\nextern \"C\" int kiln_f3(int a) { return a + ; }\n";
  const std::vector<std::string> parts = split_into_parts(broken, 2);
  const size_t failing = parts[0].find("return a + ;") != std::string::npos ? 1 : 2;
  const fs::path entry = entry_of(broken);
  const fs::path part = entry / fmt::format("source.part{}of2.cpp", failing);
  const size_t processes = compiler_process_count();
  EXPECT_TRUE(throws_error([&] { load(broken); },
                           {"test_graph", config_.cxx, "failed to compile " + part.string(),
                            "expected", (entry / "source.cpp").string()}));
  // Both parts ran with the precompiled prelude, then whole; no link.
  EXPECT_EQ(compiler_process_count(), processes + 4);
  EXPECT_NE(read_file(part).find("return a + ;"), std::string::npos);
  // Nothing published, no objects or other temporary files left.
  EXPECT_EQ(file_names(entry),
            (std::set<std::string>{"source.cpp", "source.part1of2.cpp", "source.part2of2.cpp",
                                   "source.part1of2.kernels.cpp", "source.part2of2.kernels.cpp"}));
  // Failures are not cached: the next call tries again; the corrected source compiles.
  EXPECT_THROW(load(broken), Error);
  const KernelSource fixed = kernels_source("broken part", 2 * kMinKernelsPerPart);
  EXPECT_TRUE(all_kernels_run(*load(fixed), fixed));
}

TEST_F(ParallelCompile, AMalformedThreadCountIsAClearError) {
  for (const char* value : {"0", "-2", "two", "3x"}) {
    threads_env_.set(value);
    EXPECT_TRUE(throws_error([&] { load(kernels_source("malformed", 2)); },
                             {"KILN_COMPILE_THREADS", "positive integer", value}));
  }
}

TEST_F(ParallelCompile, ThreadsLoadingOneSplitSourceShareOneCompilation) {
  threads_env_.set("2");
  const KernelSource source = kernels_source("threads", 2 * kMinKernelsPerPart);
  const size_t builds = compilation_count();
  std::vector<std::shared_ptr<const LoadedModule>> modules(3);
  std::vector<std::thread> threads;
  for (auto& module : modules) {
    threads.emplace_back([&] {
      try {
        module = load(source);
      } catch (const Error& error) {
        ADD_FAILURE() << error.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(compilation_count(), builds + 1);
  for (const auto& module : modules) ASSERT_EQ(module, modules[0]);
  ASSERT_NE(modules[0], nullptr);
  EXPECT_TRUE(all_kernels_run(*modules[0], source));
}

// Processes splitting one source differently (2 and 3 parts) at once all succeed and leave one
// valid entry.
TEST_F(ParallelCompile, ProcessesSplittingOneSourceAtOnceAllSucceed) {
  const KernelSource source = kernels_source("processes", 3 * kMinKernelsPerPart);
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> children;
  for (const char* threads : {"2", "3", "2", "3"}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start[1]);
      char byte;
      while (::read(start[0], &byte, 1) > 0) {
      }
      ::setenv("KILN_COMPILE_THREADS", threads, 1);
      int status = 1;
      try {
        if (all_kernels_run(*load(source), source)) status = 0;
      } catch (...) {
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);  // go
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }

  const fs::path entry = entry_of(source);
  for (const std::string& name : file_names(entry)) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
  }
  const size_t builds = compilation_count();
  EXPECT_TRUE(all_kernels_run(*load(source), source));
  EXPECT_EQ(compilation_count(), builds);  // the entry they left is valid
}

// A generated graph whose kernels do not fuse (an extern matrix product between each pointwise
// step) and differ (two functions of six, a different pair in each step): compiled in two parts
// (three threads allowed), every kernel runs and the result matches eager.
TEST_F(ParallelCompile, AGraphWithManyKernelsCompiledInPartsMatchesEager) {
  threads_env_.set("3");
  constexpr size_t kSteps = 2 * kMinKernelsPerPart;
  static_assert(kSteps <= 36, "six functions make 36 distinct pairs");
  auto body = [](const Tensor& x, const Tensor& w) {
    const auto apply = [](size_t function, const Tensor& t) {
      switch (function) {
        case 0:
          return t.sin();
        case 1:
          return t.cos();
        case 2:
          return t.tanh();
        case 3:
          return t.sigmoid();
        case 4:
          return t.atan();
        default:
          return t.erf();
      }
    };
    Tensor y = x;
    for (size_t i = 0; i < kSteps; ++i) y = apply(i / 6, apply(i % 6, y)).mm(w);
    return y;
  };
  auto f = compile(body, {.backend = std::string("inductor")});
  manual_seed(3);
  const Tensor x = randn({4, 8});
  const Tensor w = randn({8, 8}) * 0.5;
  LogCapture logs("output_code");
  const size_t processes = compiler_process_count();
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(kiln::testing::all_close(f(x, w), body(x, w), 1e-5, 1e-6));
  EXPECT_EQ(logs.count(fmt::format("({} kernels) as 2 translation units at once", kSteps)), 1u)
      << logs.all();
  EXPECT_EQ(compiler_process_count(), processes + 3);
}

}  // namespace
}  // namespace kiln::inductor
