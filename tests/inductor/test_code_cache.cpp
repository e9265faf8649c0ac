// The inductor's on-disk code cache: layout and permissions, hits without compiling, corrupted
// entries rebuilt, crash leftovers removed, errors, and several threads or processes at once.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "capture/capture_test_util.h"
#include "inductor/code_cache_fixture.h"
#include "test_util.h"

namespace kiln::inductor {
namespace {

using kiln::testing::add_source;
using kiln::testing::LogCapture;
using kiln::testing::ScopedEnv;
using kiln::testing::throws_error;

TEST_F(CodeCache, CompilesIntoAPrivateEntryFolder) {
  const std::string source = add_source("layout");
  auto module = load(source);
  EXPECT_EQ(add_of(*module)(2, 3), 5);

  const fs::path cache = folder_.path() / "cache";
  EXPECT_EQ(cache_dir(), cache);
  EXPECT_EQ(mode_of(cache), 0700u);
  EXPECT_EQ(mode_of(cache / "cpp"), 0700u);
  const std::string key = cache_key(source, config_, {});
  const fs::path entry = entry_of(source);
  EXPECT_EQ(entry, cache / "cpp" / key.substr(0, 2) / key);
  EXPECT_EQ(mode_of(entry), 0700u);
  EXPECT_EQ(file_names(entry), (std::set<std::string>{"ok", "module.so", "source.cpp"}));
  std::ifstream ok(entry / "ok");
  size_t size = 0;
  std::string hash;
  ok >> size >> hash;
  EXPECT_EQ(size, fs::file_size(entry / "module.so"));
  EXPECT_EQ(hash.size(), 32u);
}

TEST_F(CodeCache, KeyCoversSourceFlagsAndExtraArguments) {
  const std::string source = add_source("key");
  const std::string key = cache_key(source, config_, {});
  EXPECT_EQ(cache_key(source, config_, {}), key);
  EXPECT_NE(cache_key(source + " ", config_, {}), key);
  EXPECT_NE(cache_key(source, config_, {"-lm"}), key);
  CompilerConfig other = config_;
  other.flags.push_back("-DX");
  EXPECT_NE(cache_key(source, other, {}), key);
  // Moving an argument between the flags and the extra arguments changes the key too.
  EXPECT_NE(cache_key(source, other, {}), cache_key(source, config_, {"-DX"}));
}

TEST_F(CodeCache, SecondLoadsHitTheCacheWithoutCompiling) {
  const std::string source = add_source("hit");
  const size_t before = compilation_count();
  auto first = load(source);
  EXPECT_EQ(compilation_count(), before + 1);
  // In process: the same module while someone holds it.
  EXPECT_EQ(load(source), first);
  const fs::path module_file = entry_of(source) / "module.so";
  const auto written = fs::last_write_time(module_file);

  // From disk, as another process would: the module was unloaded, the entry is reused.
  first.reset();
  auto second = load(source);
  EXPECT_EQ(compilation_count(), before + 1);
  EXPECT_EQ(fs::last_write_time(module_file), written);
  EXPECT_EQ(add_of(*second)(20, 22), 42);
}

TEST_F(CodeCache, TruncatedModuleIsDetectedLoggedAndRebuilt) {
  const std::string source = add_source("truncated");
  const fs::path module_file = entry_of(source) / "module.so";
  load(source).reset();
  fs::resize_file(module_file, fs::file_size(module_file) / 2);

  LogCapture logs("perf_hints");
  const size_t before = compilation_count();
  auto module = load(source);
  EXPECT_EQ(compilation_count(), before + 1);
  EXPECT_EQ(add_of(*module)(1, 2), 3);
  EXPECT_EQ(logs.count("is broken"), 1u) << logs.all();
  EXPECT_EQ(logs.count(entry_of(source).string()), 1u) << logs.all();
  EXPECT_EQ(logs.count("test_kernel"), 1u) << logs.all();

  // Rebuilt for good: the next visit from disk is a hit.
  module.reset();
  load(source).reset();
  EXPECT_EQ(compilation_count(), before + 1);
}

TEST_F(CodeCache, ModuleThatFailsToLoadIsRebuilt) {
  // module.so matches ok but is not a shared object: the check passes, dlopen fails.
  const std::string source = add_source("unloadable");
  const fs::path entry = entry_of(source);
  load(source).reset();
  const std::string garbage = "not an ELF file";
  { std::ofstream(entry / "module.so", std::ios::binary | std::ios::trunc) << garbage; }
  {
    std::ofstream(entry / "ok", std::ios::trunc) << garbage.size() << " " << content_hash(garbage);
  }

  LogCapture logs("perf_hints");
  const size_t before = compilation_count();
  auto module = load(source);
  EXPECT_EQ(compilation_count(), before + 1);
  EXPECT_EQ(add_of(*module)(4, 5), 9);
  EXPECT_EQ(logs.count("is broken"), 1u) << logs.all();
}

TEST_F(CodeCache, CrashLeftoversOlderThanAnHourAreRemoved) {
  const std::string source = add_source("leftovers");
  const fs::path entry = entry_of(source);
  load(source).reset();
  const fs::path old_temporary = entry / "module.so.tmp.1.1.0";
  const fs::path new_temporary = entry / "module.so.tmp.2.2.0";
  std::ofstream(old_temporary) << "partial";
  std::ofstream(new_temporary) << "in progress";
  fs::last_write_time(old_temporary, fs::file_time_type::clock::now() - std::chrono::hours(2));

  load(source).reset();
  EXPECT_FALSE(fs::exists(old_temporary));
  EXPECT_TRUE(fs::exists(new_temporary));  // maybe another process's compilation
}

TEST_F(CodeCache, MissingCompilerIsNamed) {
  ScopedEnv cxx("KILN_CXX", "/nonexistent/cxx");
  EXPECT_TRUE(throws_error(
      [&] {
        load_or_compile(add_source("no compiler"), CompilerConfig::from_environment(), {},
                        "graph_0_kernel_3");
      },
      {"/nonexistent/cxx", "graph_0_kernel_3", "KILN_CXX"}));
}

TEST_F(CodeCache, CompilerErrorKeepsTheSourceAndQuotesTheCompiler) {
  const std::string source = add_source("syntax") + "int broken(int a) { return a + ; }\n";
  const fs::path kept = entry_of(source) / "source.cpp";
  const size_t before = compilation_count();
  EXPECT_TRUE(
      throws_error([&] { load(source); }, {"test_kernel", config_.cxx, "expected", kept.string()}));
  std::ifstream in(kept);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, source);
  EXPECT_FALSE(fs::exists(kept.parent_path() / "ok"));
  // Failures are not cached: the next call tries again (and fails again).
  EXPECT_THROW(load(source), Error);
  EXPECT_EQ(compilation_count(), before + 2);
}

TEST_F(CodeCache, DefaultFolderIsUnderHome) {
  ScopedEnv env("KILN_CACHE_DIR"), home("HOME", folder_.path().string());
  env.unset();
  EXPECT_EQ(cache_dir(), folder_.path() / ".cache" / "kiln");
  EXPECT_EQ(mode_of(folder_.path() / ".cache" / "kiln"), 0700u);
}

TEST_F(CodeCache, WithoutHomeTheFolderIsPerUserInTmp) {
  ScopedEnv env("KILN_CACHE_DIR"), home("HOME");
  env.unset();
  home.unset();
  const fs::path expected = "/tmp/kiln-cache-" + std::to_string(::geteuid());
  const bool existed = fs::exists(expected);
  EXPECT_EQ(cache_dir(), expected);
  EXPECT_EQ(mode_of(expected), 0700u);
  if (!existed) fs::remove_all(expected);
}

TEST_F(CodeCache, ThreadsLoadingOneSourceShareOneCompilation) {
  const std::string source = add_source("threads");
  const size_t before = compilation_count();
  std::vector<std::shared_ptr<const LoadedModule>> modules(4);
  std::vector<std::thread> threads;
  for (auto& module : modules) {
    threads.emplace_back([&] { module = load(source); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(compilation_count(), before + 1);
  for (const auto& module : modules) {
    ASSERT_EQ(module, modules[0]);
  }
  EXPECT_EQ(add_of(*modules[0])(6, 7), 13);
}

TEST_F(CodeCache, ProcessesCompilingOneSourceAtOnceAllSucceed) {
  const std::string source = add_source("processes");
  // The children wait on this pipe so that they start together.
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 3; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start[1]);
      char byte;
      while (::read(start[0], &byte, 1) > 0) {
      }
      // 0: loaded after compiling, 1: loaded from the entry another child left, else failed.
      int status = 2;
      try {
        const size_t before = compilation_count();
        if (add_of(*load(source))(30, 12) == 42) status = compilation_count() == before ? 1 : 0;
      } catch (...) {
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);  // go
  int compiled = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1) << "child status " << status;
    compiled += WEXITSTATUS(status) == 0;
  }
  EXPECT_GE(compiled, 1);

  const fs::path entry = entry_of(source);
  EXPECT_EQ(file_names(entry), (std::set<std::string>{"ok", "module.so", "source.cpp"}));
  const size_t before = compilation_count();
  EXPECT_EQ(add_of(*load(source))(1, 1), 2);
  EXPECT_EQ(compilation_count(), before);  // the entry they left is valid
}

}  // namespace
}  // namespace kiln::inductor
