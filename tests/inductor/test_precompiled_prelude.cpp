// The generated code's prelude precompiled once per compiler configuration: built into the code
// cache's prelude folder and reused by later modules, a truncated compiled header rebuilt, and a
// compiler that cannot precompile it leaving each module to compile whole. The modules' kernels
// run correctly every way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>

#include "capture/capture_test_util.h"
#include "inductor/code_cache.h"
#include "inductor/inductor_test_util.h"
#include "inductor/kernel_source.h"
#include "inductor/precompiled_prelude.h"
#include "test_util.h"

namespace kiln::inductor {
namespace {

namespace fs = std::filesystem;
using kiln::testing::LogCapture;
using kiln::testing::ScopedEnv;
using kiln::testing::TemporaryFolder;

using KernelFunction = int (*)(int);

// A prelude with a helper of internal linkage and a standard header, unique per test (`tag`).
std::string prelude_of(const std::string& tag) {
  return fmt::format("// {} {} {}\n#include <cstdint>\n", tag, ::getpid(),
                     std::chrono::steady_clock::now().time_since_epoch().count()) +
         "namespace {\ninline int64_t kiln_triple(int64_t a) { return 3 * a; }\n}  // namespace\n";
}

// `count` kernels kiln_g<i>(a) = 3a + i + offset.
KernelSource source_of(const std::string& prelude, int count, int offset) {
  KernelSource source{.prelude = prelude, .functions = {}};
  for (int i = 0; i < count; ++i) {
    source.functions.push_back(fmt::format(
        "\nextern \"C\" int kiln_g{0}(int a) {{\n  return int(kiln_triple(a)) + {0} + {1};\n}}\n",
        i, offset));
  }
  return source;
}

::testing::AssertionResult kernels_run(const LoadedModule& module, int count, int offset) {
  for (int i = 0; i < count; ++i) {
    auto f = reinterpret_cast<KernelFunction>(module.symbol(fmt::format("kiln_g{}", i)));
    if (f(7) != 21 + i + offset) return ::testing::AssertionFailure() << "kiln_g" << i;
  }
  return ::testing::AssertionSuccess();
}

// The prelude folders of the cache (one per configuration and prelude).
std::vector<fs::path> prelude_folders() {
  std::vector<fs::path> folders;
  const fs::path root = cache_dir() / "cpp" / "prelude";
  if (!fs::exists(root)) return folders;
  for (const auto& e : fs::directory_iterator(root)) folders.push_back(e.path());
  return folders;
}

// The compiled header of a prelude folder (.gch or .pch).
fs::path compiled_in(const fs::path& folder) {
  for (const char* name : {"kiln_prelude.h.gch", "kiln_prelude.h.pch"}) {
    if (fs::exists(folder / name)) return folder / name;
  }
  return {};
}

class PrecompiledPrelude : public ::testing::Test {
 protected:
  std::shared_ptr<const LoadedModule> load(const KernelSource& source) {
    return load_or_compile(source, CompilerConfig::from_environment(), {}, "test_graph");
  }
  TemporaryFolder folder_;
  ScopedEnv cache_env_{"KILN_CACHE_DIR", (folder_.path() / "cache").string()};
  ScopedEnv threads_env_{"KILN_COMPILE_THREADS", "1"};
};

TEST_F(PrecompiledPrelude, IsBuiltOnceAndModulesIncludeIt) {
  const std::string prelude = prelude_of("built once");
  EXPECT_TRUE(kernels_run(*load(source_of(prelude, 3, 0)), 3, 0));
  const std::vector<fs::path> folders = prelude_folders();
  ASSERT_EQ(folders.size(), 1u);
  const fs::path compiled = compiled_in(folders[0]);
  ASSERT_FALSE(compiled.empty());
  std::ifstream header(folders[0] / "kiln_prelude.h");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(header), {}), prelude);
  EXPECT_TRUE(fs::exists(folders[0] / "ok"));
  const auto written = fs::last_write_time(compiled);

  // Another module with that prelude: its kernels file includes the same compiled header.
  const KernelSource second = source_of(prelude, 5, 100);
  EXPECT_TRUE(kernels_run(*load(second), 5, 100));
  EXPECT_EQ(prelude_folders().size(), 1u);
  EXPECT_EQ(fs::last_write_time(compiled), written);
  const fs::path entry =
      cache_entry_dir(cache_key(second.joined(), CompilerConfig::from_environment(), {}));
  EXPECT_TRUE(fs::exists(entry / "source.kernels.cpp"));
  std::ifstream whole(entry / "source.cpp");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(whole), {}), second.joined());
}

TEST_F(PrecompiledPrelude, ATruncatedCompiledHeaderIsRebuilt) {
  const std::string prelude = prelude_of("truncated");
  EXPECT_TRUE(kernels_run(*load(source_of(prelude, 2, 0)), 2, 0));
  ASSERT_EQ(prelude_folders().size(), 1u);
  const fs::path compiled = compiled_in(prelude_folders()[0]);
  ASSERT_FALSE(compiled.empty());
  const uintmax_t size = fs::file_size(compiled);
  fs::resize_file(compiled, size / 2);

  LogCapture logs("perf_hints");
  EXPECT_TRUE(kernels_run(*load(source_of(prelude, 2, 50)), 2, 50));
  EXPECT_EQ(logs.count("does not match its ok record"), 1u) << logs.all();
  // Whole again (a rebuild differs from the first by a few bytes: the compiler records the
  // temporary file's name).
  EXPECT_GT(fs::file_size(compiled), size * 9 / 10);
}

TEST_F(PrecompiledPrelude, ACompilerThatCannotPrecompileItCompilesModulesWhole) {
  // A g++ that refuses to compile headers.
  const fs::path wrapper = folder_.path() / "no-pch-g++";
  {
    std::ofstream script(wrapper);
    script << "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = c++-header ] && { echo 'no headers' "
              ">&2; exit 1; }; done\nexec g++ \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  ScopedEnv cxx("KILN_CXX", wrapper.string());
  LogCapture logs("perf_hints");
  const KernelSource source = source_of(prelude_of("no pch"), 4, 7);
  EXPECT_TRUE(kernels_run(*load(source), 4, 7));
  EXPECT_EQ(logs.count("could not be precompiled"), 1u) << logs.all();
  const fs::path entry =
      cache_entry_dir(cache_key(source.joined(), CompilerConfig::from_environment(), {}));
  EXPECT_FALSE(fs::exists(entry / "source.kernels.cpp"));
  EXPECT_TRUE(fs::exists(entry / "module.so"));
}

}  // namespace
}  // namespace kiln::inductor
