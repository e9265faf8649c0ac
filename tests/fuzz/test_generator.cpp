// The fuzzer's generator: every program it makes is valid in eager (forward and backward, float32
// and float64), a seed always gives the same program, and over a batch of seeds every op family,
// sizes 0 and 1, in-place writes and inputs requiring grad all occur.
#include "fuzz/generator.h"
#include "fuzz/runner.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace kiln::fuzz {
namespace {

TEST(FuzzGenerator, EveryProgramRunsInEager) {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    Program p;
    ASSERT_NO_THROW(p = generate(seed, {.max_ops = 25})) << "seed " << seed;
    ASSERT_FALSE(p.nodes.empty());
    ASSERT_FALSE(p.outputs.empty());
    EXPECT_NO_THROW(run_eager(p, DType::Float32)) << "seed " << seed << "\n" << p.str();
    EXPECT_NO_THROW(run_eager(p, DType::Float64)) << "seed " << seed << "\n" << p.str();
  }
}

TEST(FuzzGenerator, ASeedGivesOneProgram) {
  std::set<std::string> distinct;
  for (uint64_t seed : {3ull, 77ull, 123456789ull}) {
    const Program a = generate(seed), b = generate(seed);
    EXPECT_EQ(a.str(), b.str());
    EXPECT_EQ(a.seed, seed);
    // Same data too: the inputs are drawn from seeds the program holds.
    const std::vector<Tensor> x = make_inputs(a), y = make_inputs(b);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].to(DType::Float64).tolist<double>(), y[i].to(DType::Float64).tolist<double>());
    }
    distinct.insert(a.str());
  }
  EXPECT_EQ(distinct.size(), 3u);
}

TEST(FuzzGenerator, RespectsMaxOps) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    EXPECT_LE(generate(seed, {.max_ops = 3}).nodes.size(), 3u);
  }
}

TEST(FuzzGenerator, CoversTheOpFamiliesAndEdgeSizes) {
  std::set<std::string> ops;
  bool zero_size = false, size_one = false, grad = false, into_argument = false, into_view = false,
       integer = false;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Program p = generate(seed);
    for (const Node& n : p.nodes) {
      ops.insert(n.op);
      into_argument = into_argument || n.target == WriteTarget::Argument;
      into_view = into_view || n.target == WriteTarget::CloneNarrow;
    }
    for (const InputSpec& in : p.inputs) {
      for (int64_t s : in.sizes) {
        zero_size = zero_size || s == 0;
        size_one = size_one || s == 1;
      }
      grad = grad || in.requires_grad;
      integer = integer || in.dtype == DType::Int64;
    }
  }
  for (const char* op : {"exp",
                         "add",
                         "mul",
                         "gt",
                         "sum",
                         "amax",
                         "var.correction",
                         "reshape",
                         "permute",
                         "slice.Tensor",
                         "expand",
                         "unsqueeze",
                         "matmul",
                         "linear",
                         "softmax.int",
                         "layer_norm",
                         "cat",
                         "where",
                         "_to_copy",
                         "add_",
                         "relu_",
                         "fill_"}) {
    EXPECT_TRUE(ops.count(op)) << op << " never generated";
  }
  EXPECT_TRUE(zero_size);
  EXPECT_TRUE(size_one);
  EXPECT_TRUE(grad);
  EXPECT_TRUE(integer);
  EXPECT_TRUE(into_argument);
  EXPECT_TRUE(into_view);
}

}  // namespace
}  // namespace kiln::fuzz
