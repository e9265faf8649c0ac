// Inference freezing's pre-packing of linear layers' weights: mm of a constant mat2 becomes
// _mm_packed on a weight packed once by _pack_mm_weight (checked on the frozen graphs), the bias
// add folds into it, compiled results match eager (also after the weights change, and for another
// batch size), small or float64 products stay mm, and a packed copy is what the kernel reads.
#include "capture/capture_test_util.h"
#include "inductor/extern_epilogue.h"
#include "inductor/freezing.h"
#include "inductor/freezing_test_util.h"
#include "ops/linalg/onednn_matmul.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::count_ops;
using testing::RecordedGraphs;
using testing::recording;

// Linear(96, 80) -> GELU -> Linear(80, 72): products of 64 rows above kSmallGemmWork.
std::shared_ptr<nn::Sequential> two_linear_layers(DType dtype) {
  auto net = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(96, 80),
                                              std::make_shared<nn::GELU>(),
                                              std::make_shared<nn::Linear>(80, 72));
  net->to(dtype);
  net->eval();
  return net;
}

// Packing forced (options{"prepack_weights": "true"}: plain layouts too), so that every machine
// runs the packed products.
TEST(InductorMatmulPrepacking, LinearLayersReadPackedWeightsWithTheBiasFused) {
  manual_seed(1);
  auto net = two_linear_layers(kFloat32);
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(net, recording(record, {{"prepack_weights", "true"}}));
  const Tensor x = randn({64, 96});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), net->forward(x), 1e-5, 1e-5));

  ASSERT_EQ(record->graphs.size(), 1u);
  inductor::ConstantSplit frozen =
      inductor::freeze(record->graphs[0], {.pack_plain_matmul_weights = true});
  EXPECT_EQ(count_ops(frozen.main, "_mm_packed"), 2u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "mm"), 0u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.constants, "_pack_mm_weight"), 2u) << frozen.constants.str();
  // The adds of the biases fold into the packed products.
  EXPECT_EQ(inductor::fuse_extern_epilogues(frozen.main), 2u) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "add"), count_ops(record->graphs[0], "add") - 2)
      << frozen.main.str();
  for (const auto& n : frozen.main.nodes()) {
    if (n->kind == graph::NodeKind::Op && n->op->full_name() == "_mm_packed") {
      EXPECT_TRUE(std::any_of(n->uses.begin(), n->uses.end(), [](const graph::TensorUse& u) {
        return u.arg == 3;
      })) << frozen.main.str();
    }
  }

  // New weights (in place, and loaded): packed again, the new result.
  auto first = std::dynamic_pointer_cast<nn::Linear>(net->children().at(0));
  ASSERT_TRUE(first);
  first->weight.mul_(-0.5);
  EXPECT_TRUE(all_close((*compiled)(x), net->forward(x), 1e-5, 1e-5));
  first->weight.copy_(randn(first->weight.sizes()));
  first->bias.fill_(0.25);
  EXPECT_TRUE(all_close((*compiled)(x), net->forward(x), 1e-5, 1e-5));
  // Another batch size (another row count than the weights were packed for).
  const Tensor x40 = randn({40, 96});
  EXPECT_TRUE(all_close((*compiled)(x40), net->forward(x40), 1e-5, 1e-5));
}

// By default a weight is packed only where oneDNN reads it in a blocked layout of its own
// (brgemm, AVX-512); where its layout is a plain one (gemm:jit on AVX2 machines) the product
// reads the linear layer's weight as it is, faster there (onednn_matmul.h).
TEST(InductorMatmulPrepacking, TheDefaultPacksOnlyBlockedLayouts) {
  manual_seed(2);
  auto net = two_linear_layers(kFloat32);
  auto record = std::make_shared<RecordedGraphs>();
  auto compiled = compile(net, recording(record));
  const Tensor x = randn({64, 96});
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close((*compiled)(x), net->forward(x), 1e-5, 1e-5));
  ASSERT_EQ(record->graphs.size(), 1u);
  const size_t blocked = (ops::linalg::onednn_blocks_matmul_weight(64, 96, 80) ? 1 : 0) +
                         (ops::linalg::onednn_blocks_matmul_weight(64, 80, 72) ? 1 : 0);
  const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
  EXPECT_EQ(count_ops(frozen.main, "_mm_packed"), blocked) << frozen.main.str();
  EXPECT_EQ(count_ops(frozen.main, "mm"), 2u - blocked) << frozen.main.str();
  EXPECT_EQ(count_ops(inductor::freeze(record->graphs[0], {.prepack_weights = false}).main, "mm"),
            2u);
}

TEST(InductorMatmulPrepacking, SmallAndFloat64ProductsStayMm) {
  manual_seed(2);
  for (const auto& [dtype, rows] : {std::pair{kFloat32, 4}, std::pair{kFloat64, 64}}) {
    auto net = two_linear_layers(dtype);
    auto record = std::make_shared<RecordedGraphs>();
    auto compiled = compile(net, recording(record));
    const Tensor x = randn({rows, 96}).to(dtype);
    autograd::NoGradGuard no_grad;
    EXPECT_TRUE(all_close((*compiled)(x), net->forward(x), 1e-5, 1e-5));
    ASSERT_EQ(record->graphs.size(), 1u);
    const inductor::ConstantSplit frozen = inductor::freeze(record->graphs[0]);
    EXPECT_EQ(count_ops(frozen.main, "_mm_packed"), 0u) << frozen.main.str();
    EXPECT_EQ(count_ops(frozen.main, "mm"), 2u) << frozen.main.str();
  }
}

TEST(InductorMatmulPrepacking, APackedWeightGivesTheProductAndAStaleOneIsIgnored) {
  manual_seed(3);
  const Tensor x = randn({64, 256}), w = randn({192, 256}), b = randn({192});
  const auto& pack = ops::OpRegistry::instance().get("_pack_mm_weight");
  const auto& packed_mm = ops::OpRegistry::instance().get("_mm_packed");
  Tensor packed = ops::call1(pack, {w.t(), int64_t{64}});
  ASSERT_GT(packed.numel(), w.numel() * 4) << "oneDNN reads this weight blocked";
  const Tensor want = addmm(b, x, w.t());
  EXPECT_TRUE(all_close(ops::call1(packed_mm, {x, w.t(), packed, b}), want, 1e-5, 1e-5));
  EXPECT_TRUE(
      all_close(ops::call1(packed_mm, {x, w.t(), packed, Tensor()}), mm(x, w.t()), 1e-5, 1e-5));
  // A packed copy of other values is used as it is (the freezing runtime keeps it current)...
  Tensor other = ops::call1(pack, {(w * 2).t(), int64_t{64}});
  EXPECT_TRUE(
      all_close(ops::call1(packed_mm, {x, w.t(), other, b}), addmm(b, x, (w * 2).t()), 1e-5, 1e-5));
  // ...but one whose layout header matches no primitive is ignored: mat2 is read.
  other.zero_();
  EXPECT_TRUE(all_close(ops::call1(packed_mm, {x, w.t(), other, b}), want, 1e-5, 1e-5));
  // Packed for 64 rows, called with 8: the product of mat2 itself.
  const Tensor x8 = x.narrow(0, 0, 8);
  EXPECT_TRUE(
      all_close(ops::call1(packed_mm, {x8, w.t(), packed, b}), addmm(b, x8, w.t()), 1e-5, 1e-5));
}

TEST(InductorMatmulPrepacking, BadArgumentsNameTheOpAndTheSizes) {
  const Tensor x = randn({8, 16}), w = randn({16, 12});
  const auto& packed_mm = ops::OpRegistry::instance().get("_mm_packed");
  const auto& pack = ops::OpRegistry::instance().get("_pack_mm_weight");
  const Tensor none = empty({0}, TensorOptions(kUInt8));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        ops::call1(packed_mm, {x, w, none, randn({13})});
      },
      {"_mm_packed: expected a 1-D bias of size 12", "13 elements"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        ops::call1(packed_mm, {x, w, randn({4}), Tensor()});
      },
      {"_mm_packed: expected a 1-D uint8 packed_mat2"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        ops::call1(packed_mm, {x, w.t(), none, Tensor()});
      },
      {"mat1 and mat2 shapes cannot be multiplied (8x16 and 12x16)"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        ops::call1(pack, {randn({2, 3, 4}), int64_t{4}});
      },
      {"_pack_mm_weight: expected a 2-D mat2, got 3-D"}));
}

}  // namespace
}  // namespace kiln
