// The reproducer writer: its output for a fixed program is the checked-in
// regressions/fuzz_example_chain.cpp (compiled into kiln_tests like every regression, so this
// proves the writer's output compiles and runs), compared ignoring whitespace (clang-format).
#include "fuzz/reproducer.h"
#include "fuzz/runner.h"
#include "fuzz_test_programs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln::fuzz {
namespace {

std::string without_whitespace(std::string s) {
  s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }),
          s.end());
  return s;
}

TEST(FuzzReproducer, WritesTheCheckedInExample) {
  const Program p = testing::chain_program();
  const RunConfig config{"inductor", ShapeMode::Dynamic, "default"};
  const std::string written =
      reproducer_cpp(p, config, "ExampleChain", "an example: this program passes");
  const std::filesystem::path path =
      std::filesystem::path(KILN_FUZZ_REGRESSIONS_DIR) / "fuzz_example_chain.cpp";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream checked_in;
  checked_in << in.rdbuf();
  if (without_whitespace(written) != without_whitespace(checked_in.str())) {
    const auto actual = std::filesystem::temp_directory_path() / "fuzz_example_chain.cpp";
    std::ofstream(actual) << written;
    FAIL() << "the writer's output differs from " << path << "; it wrote " << actual;
  }
}

// A finding at other sizes: the test compiles at the generated sizes (marking the dim in both
// calls under mark_dynamic), then compares at every size >= 2 grown by one.
TEST(FuzzReproducer, AFindingAtOtherSizesWarmsUpAtTheGeneratedSizes) {
  const Program p = testing::chain_program();
  const RunConfig config{"aot_eager", ShapeMode::MarkDynamic, "default"};
  const std::string finding = std::string(kAtOtherSizes) + ": output 0 differs";
  const std::string written = reproducer_cpp(p, config, "OtherSizes", finding);
  const auto marked = marked_dim(p);
  ASSERT_TRUE(marked.has_value());
  auto mark = [&](const char* var) {
    return fmt::format("kiln::mark_dynamic({}[{}], {});", var, marked->first, marked->second);
  };
  for (const std::string& part :
       {std::string("std::vector<kiln::Tensor> inputs_at_other_sizes()"),
        std::string("kiln::randn({4, 5}"), std::string("kiln::randn({5}"),
        std::string("std::vector<kiln::Tensor> first = inputs();"), mark("first"),
        std::string("compiled(first);"), std::string("eager_in = inputs_at_other_sizes()"),
        std::string("compiled_in = inputs_at_other_sizes();"), mark("compiled_in")}) {
    EXPECT_NE(written.find(part), std::string::npos) << part << " missing from\n" << written;
  }
  // Any other finding compares at the generated sizes only.
  const std::string plain = reproducer_cpp(p, config, "Plain", "mismatch: output 0 differs");
  EXPECT_EQ(plain.find("inputs_at_other_sizes"), std::string::npos) << plain;
  EXPECT_NE(plain.find(mark("compiled_in")), std::string::npos) << plain;
}

TEST(FuzzReproducer, NamesAndLiterals) {
  const Program p = testing::chain_program();
  EXPECT_EQ(reproducer_test_name(p, {"aot_eager", ShapeMode::MarkDynamic, "default"}),
            "Seed42_aot_eager_mark_dynamic_default");
  EXPECT_EQ(literal_cpp(ops::IValue(int64_t{3})), "int64_t{3}");
  EXPECT_EQ(literal_cpp(ops::IValue(2.0)), "2.0");
  EXPECT_EQ(literal_cpp(ops::IValue(0.1)), "0.10000000000000001");
  EXPECT_EQ(literal_cpp(ops::IValue(std::vector<int64_t>{1, -1})), "std::vector<int64_t>{1, -1}");
  EXPECT_EQ(literal_cpp(ops::IValue(DType::Float32)), "kiln::DType::Float32");
  EXPECT_EQ(literal_cpp(ops::IValue()), "kiln::ops::IValue()");
}

}  // namespace
}  // namespace kiln::fuzz
