// Graph::str and ValueMeta::str against hand-written expected text.
#include "graph/graph_builder.h"

#include <fmt/format.h>

namespace kiln::graph {
namespace {

using testing::GraphBuilder;
using testing::NamedSymbol;

TEST(GraphPrinter, PrintsOneLinePerNodeLikeFx) {
  GraphBuilder b;
  Value x = b.input("x", ones({2, 3}));
  Value w = b.input("fc.weight", ones({4, 3}), InputRole::Parameter);
  Value bias = b.input("fc.bias", ones({4}), InputRole::Parameter);
  Value t = b.call1("t", {w}, SourceLoc{"train.cpp", 11});
  Value mm = b.call1("addmm", {bias, x, t}, SourceLoc{"/home/user/src/train.cpp", 12});
  Value gelu = b.call1("gelu", {mm, std::string("tanh")});
  std::vector<Value> ln = b.call("native_layer_norm",
                                 {gelu, std::vector<int64_t>{4}, std::nullopt, std::nullopt, 1e-5});
  Value cat = b.call1("cat", {std::vector<Value>{ln[0], gelu}, 1});
  Value add = b.call1("add", {cat, cat, Scalar(2.0)});
  Value add1 = b.call1("add", {add, cat});
  Value sum = b.call1("sum", {add1, std::vector<int64_t>{1}, true, kFloat64});
  b.graph.set_outputs({sum, ln[1]});

  const char* expected =
      "%x : f32[2, 3] = input[user_arg](x)\n"
      "%fc_weight : f32[4, 3] = input[parameter](fc.weight)\n"
      "%fc_bias : f32[4] = input[parameter](fc.bias)\n"
      "%t : f32[3, 4](1, 3) = t(%fc_weight)  # train.cpp:11\n"
      "%addmm : f32[2, 4] = addmm(%fc_bias, %x, %t, beta=1, alpha=1)  # train.cpp:12\n"
      "%gelu : f32[2, 4] = gelu(%addmm, approximate='tanh')\n"
      "%native_layer_norm : (f32[2, 4], f32[2, 1], f32[2, 1]) = "
      "native_layer_norm(%gelu, [4], None, None, 1e-05)\n"
      "%cat : f32[2, 8] = cat([%native_layer_norm[0], %gelu], 1)\n"
      "%add : f32[2, 8] = add(%cat, %cat, alpha=2.0)\n"
      "%add_1 : f32[2, 8] = add(%add, %cat, alpha=1)\n"
      "%sum : f64[2, 1] = sum(%add_1, [1], True, dtype=kiln.float64)\n"
      "return (%sum, %native_layer_norm[1])\n";
  EXPECT_EQ(b.graph.str(), expected);
}

TEST(GraphPrinter, SingleOutputReturnIsAOneTuple) {
  GraphBuilder b;
  Value x = b.input("arg 0", ones({2}, kInt64));
  Value neg = b.call1("neg", {x});
  b.graph.set_outputs({neg});
  EXPECT_EQ(b.graph.str(),
            "%arg_0 : i64[2] = input[user_arg](arg 0)\n"
            "%neg : i64[2] = neg(%arg_0)\n"
            "return (%neg,)\n");
}

TEST(GraphPrinter, InPlaceAndOutVariantsAndRandomOps) {
  GraphBuilder b;
  Value x = b.input("x", ones({3}));
  Value buf = b.input("buf", zeros({3}), InputRole::Buffer);
  Value c = b.input("c", ones({3}), InputRole::Constant);
  b.call1("add_", {buf, x, 1});
  b.call1("add.out", {x, c, 1, buf});
  Value r = b.call1("rand", {std::vector<int64_t>{2, 2}});
  b.graph.set_outputs({r});
  EXPECT_EQ(b.graph.str(),
            "%x : f32[3] = input[user_arg](x)\n"
            "%buf : f32[3] = input[buffer](buf)\n"
            "%c : f32[3] = input[constant](c)\n"
            "%add_ : f32[3] = add_(%buf, %x, alpha=1)\n"
            "%add_out : f32[3] = add.out(%x, %c, alpha=1, out=%buf)\n"
            "%rand : f32[2, 2] = rand([2, 2], dtype=None, device=None)\n"
            "return (%rand,)\n");
}

TEST(GraphPrinter, DtypeShortNames) {
  const std::pair<DType, const char*> cases[] = {
      {kFloat32, "f32[1]"}, {kFloat64, "f64[1]"}, {kFloat16, "f16[1]"}, {kBFloat16, "bf16[1]"},
      {kInt64, "i64[1]"},   {kInt32, "i32[1]"},   {kInt16, "i16[1]"},   {kInt8, "i8[1]"},
      {kUInt8, "u8[1]"},    {kBool, "b8[1]"}};
  for (const auto& [dtype, text] : cases) {
    EXPECT_EQ(ValueMeta::of(zeros({1}, dtype)).str(), text);
  }
}

TEST(GraphPrinter, ScalarAndNonContiguousMeta) {
  EXPECT_EQ(ValueMeta::of(zeros({})).str(), "f32[]");
  Tensor x = zeros({4, 3});
  EXPECT_EQ(ValueMeta::of(x.t()).str(), "f32[3, 4](1, 3)");
  EXPECT_EQ(ValueMeta::of(x).str(), "f32[4, 3]");
}

TEST(GraphPrinter, SymbolicSizesPrintTheirExpression) {
  SymInt s0 = NamedSymbol::make("s0");
  ValueMeta m;
  m.sizes = {3, s0};
  m.strides = {s0, 1};
  EXPECT_EQ(m.str(), "f32[3, s0]");
  m.strides = {1, 3};
  EXPECT_EQ(m.str(), "f32[3, s0](1, 3)");
  m.dtype = kBFloat16;
  m.sizes = {s0};
  m.strides = {1};
  EXPECT_EQ(m.str(), "bf16[s0]");
}

TEST(GraphPrinter, SourceLocKeepsTheFileName) {
  EXPECT_EQ((SourceLoc{"/a/b/model.cpp", 7}).str(), "model.cpp:7");
  EXPECT_EQ((SourceLoc{"model.cpp", 7}).str(), "model.cpp:7");
  EXPECT_EQ(SourceLoc{}.str(), "<unknown>");
  EXPECT_FALSE((SourceLoc{"model.cpp", 0}).known());
}

TEST(GraphPrinter, RenamedInputsKeepTheirLabel) {
  GraphBuilder b;
  Value x = b.input("arg 0", ones({2}));
  Value y = b.input("arg 1", ones({2}));
  b.graph.rename(*x.node, "x");
  b.graph.rename(*y.node, "x");  // taken: gets a counter
  Value s = b.call1("mul", {x, y});
  b.graph.set_outputs({s});
  EXPECT_EQ(b.graph.str(),
            "%x : f32[2] = input[user_arg](arg 0)\n"
            "%x_1 : f32[2] = input[user_arg](arg 1)\n"
            "%mul : f32[2] = mul(%x, %x_1)\n"
            "return (%mul,)\n");
}

}  // namespace
}  // namespace kiln::graph
