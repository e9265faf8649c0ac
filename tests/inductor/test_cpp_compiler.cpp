// The inductor's C++ compiler driver: settings from the environment, child processes without a
// shell, compiler identity, compiling and loading a shared object, and its errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "inductor/content_hash.h"
#include "inductor/cpp_compiler.h"
#include "inductor/inductor_test_util.h"
#include "inductor/loaded_module.h"
#include "inductor/subprocess.h"
#include "test_util.h"

namespace kiln::inductor {
namespace {

namespace fs = std::filesystem;
using kiln::testing::ScopedEnv;
using kiln::testing::TemporaryFolder;
using kiln::testing::throws_error;

void write_text(const fs::path& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

TEST(CppCompiler, ConfigComesFromKilnCxxThenCxxThenGxx) {
  ScopedEnv kiln_cxx("KILN_CXX"), cxx("CXX"), flags("KILN_CXXFLAGS");
  kiln_cxx.unset();
  cxx.unset();
  flags.unset();
  CompilerConfig config = CompilerConfig::from_environment();
  EXPECT_EQ(config.cxx, "g++");
  EXPECT_EQ(config.flags,
            (std::vector<std::string>{"-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                                      "-std=c++17", "-fno-math-errno", "-ffp-contract=off"}));
  cxx.set("clang++");
  EXPECT_EQ(CompilerConfig::from_environment().cxx, "clang++");
  kiln_cxx.set("/opt/my compiler/c++");
  EXPECT_EQ(CompilerConfig::from_environment().cxx, "/opt/my compiler/c++");
  flags.set("  -DA=1\t-ffast-math ");
  config = CompilerConfig::from_environment();
  ASSERT_EQ(config.flags.size(), 10u);
  EXPECT_EQ(config.flags[8], "-DA=1");
  EXPECT_EQ(config.flags[9], "-ffast-math");
}

TEST(CppCompiler, ChildProcessArgumentsAreNotShellParsed) {
  ProcessResult r = run_process({"printf", "%s|", "a b", "'c'", "$HOME", ";", "*"});
  ASSERT_TRUE(r.succeeded()) << r.status_text();
  EXPECT_EQ(r.output, "a b|'c'|$HOME|;|*|");

  ProcessResult both = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_TRUE(both.started);
  EXPECT_EQ(both.exit_status, 3);
  EXPECT_EQ(both.output, "out\nerr\n");
  EXPECT_EQ(both.status_text(), "exit status 3");

  ProcessResult missing = run_process({"/nonexistent/program"});
  EXPECT_FALSE(missing.started);
  EXPECT_NE(missing.status_text().find("could not be started"), std::string::npos);
}

TEST(CppCompiler, FirstLinesCutsLongOutput) {
  EXPECT_EQ(first_lines("a\nb\n", 2), "a\nb\n");
  EXPECT_EQ(first_lines("a\nb", 5), "a\nb");
  EXPECT_EQ(first_lines("a\nb\nc\nd", 2), "a\nb\n... (2 more lines)\n");
}

TEST(CppCompiler, IdentityIsTheFirstVersionLine) {
  CompilerConfig config{"g++", {}};
  std::string identity = compiler_identity(config);
  EXPECT_FALSE(identity.empty());
  EXPECT_EQ(identity.find('\n'), std::string::npos);
  EXPECT_EQ(compiler_identity(config), identity);  // cached
  EXPECT_TRUE(throws_error(
      [] {
        compiler_identity({"/nonexistent/cxx", {}});
      },
      {"/nonexistent/cxx", "KILN_CXX"}));
}

TEST(CppCompiler, CompilesLoadsAndCallsASharedObject) {
  TemporaryFolder folder;
  fs::path source = folder.path() / "add.cpp";
  write_text(source,
             "extern \"C\" int kiln_add(int a, int b) { return a + b + KILN_OFFSET; }\n"
             "extern \"C\" { int kiln_answer = 42; }\n");
  fs::path output = folder.path() / "add.so";
  // Extra arguments come after the source (where -l libraries must be) and still apply.
  compile_shared_object(CompilerConfig::from_environment(), source, output, {"-DKILN_OFFSET=10"});
  LoadedModule module = LoadedModule::open(output);
  auto add = reinterpret_cast<int (*)(int, int)>(module.symbol("kiln_add"));
  EXPECT_EQ(add(2, 3), 15);
  EXPECT_EQ(*static_cast<int*>(module.symbol("kiln_answer")), 42);
  EXPECT_TRUE(
      throws_error([&] { module.symbol("kiln_missing"); }, {"kiln_missing", output.string()}));

  LoadedModule moved = std::move(module);
  EXPECT_EQ(reinterpret_cast<int (*)(int, int)>(moved.symbol("kiln_add"))(1, 1), 12);
  EXPECT_TRUE(
      throws_error([&] { LoadedModule::open(folder.path() / "absent.so"); }, {"absent.so"}));
}

TEST(CppCompiler, CompilerErrorsNameCompilerSourceAndMessages) {
  TemporaryFolder folder;
  fs::path source = folder.path() / "broken.cpp";
  write_text(source, "int f(int a) { return a + ; }\n");
  CompilerConfig config = CompilerConfig::from_environment();
  EXPECT_TRUE(
      throws_error([&] { compile_shared_object(config, source, folder.path() / "broken.so", {}); },
                   {config.cxx, source.string(), "exit status", "expected"}));
  config.cxx = "/nonexistent/cxx";
  EXPECT_TRUE(
      throws_error([&] { compile_shared_object(config, source, folder.path() / "broken.so", {}); },
                   {"/nonexistent/cxx", source.string(), "could not be started"}));
}

// MurmurHash3_x64_128's verification value from SMHasher: keys 0, 0 1, 0 1 2, ... (up to 255
// bytes) hashed with seed 256 - length, their hashes hashed with seed 0, low 32 bits.
TEST(ContentHash, MatchesMurmurHash3Reference) {
  std::string keys, hashes;
  for (int i = 0; i < 256; ++i) {
    auto [h1, h2] = murmur3_x64_128(keys, static_cast<uint32_t>(256 - i));
    for (uint64_t h : {h1, h2}) {
      for (int b = 0; b < 8; ++b) hashes += static_cast<char>((h >> (8 * b)) & 0xff);
    }
    keys += static_cast<char>(i);
  }
  EXPECT_EQ(murmur3_x64_128(hashes, 0)[0] & 0xffffffffu, 0x6384ba69u);
  EXPECT_EQ(content_hash(""), std::string(32, '0'));
  EXPECT_EQ(content_hash("kiln").size(), 32u);
  EXPECT_NE(content_hash("kiln"), content_hash("kilm"));
}

}  // namespace
}  // namespace kiln::inductor
