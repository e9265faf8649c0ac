// Graph structure: naming, users, rewiring, erase, clone, side effects and the structural key.
#include "graph/graph_builder.h"
#include "test_util.h"

#include <cmath>

namespace kiln::graph {
namespace {

using kiln::testing::throws_error;
using kiln::testing::values;
using testing::GraphBuilder;

TEST(Graph, NamesAreUniqueAndInputsStayFirst) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value n1 = b.call1("neg", {x});
  Value n2 = b.call1("neg", {n1});
  Value late = b.input("fc.weight", zeros({2}), InputRole::Parameter);  // found mid-trace
  Value n3 = b.call1("neg", {late});
  EXPECT_EQ(n1.node->name, "neg");
  EXPECT_EQ(n2.node->name, "neg_1");
  EXPECT_EQ(n3.node->name, "neg_2");
  EXPECT_EQ(late.node->name, "fc_weight");
  ASSERT_EQ(b.graph.inputs().size(), 2u);
  EXPECT_EQ(b.graph.inputs()[0], x.node);
  EXPECT_EQ(b.graph.inputs()[1], late.node);
  EXPECT_EQ(b.graph.nodes()[1].get(), late.node);
  EXPECT_EQ(b.graph.num_inputs(), 2u);
  EXPECT_EQ(b.graph.num_ops(), 3u);
  // A label that collides with a counter name still gets a fresh one.
  Value odd = b.input("neg_1", zeros({2}));
  EXPECT_EQ(odd.node->name, "neg_1_1");
}

TEST(Graph, UsersAndReplaceAllUses) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value y = b.input("y", zeros({2}));
  Value a = b.call1("add", {x, x});
  Value c = b.call1("cat", {std::vector<Value>{x, y, x}});
  b.graph.set_outputs({x, c});
  EXPECT_EQ(b.graph.users(x), (std::vector<Node*>{a.node, c.node}));
  EXPECT_EQ(b.graph.users(a), (std::vector<Node*>{}));

  b.graph.replace_all_uses(x, y);
  EXPECT_TRUE(b.graph.users(x).empty());
  EXPECT_EQ(b.graph.users(y), (std::vector<Node*>{a.node, c.node}));
  EXPECT_EQ(b.graph.outputs()[0], y);
  EXPECT_EQ(b.graph.str(),
            "%x : f32[2] = input[user_arg](x)\n"
            "%y : f32[2] = input[user_arg](y)\n"
            "%add : f32[2] = add(%y, %y, alpha=1)\n"
            "%cat : f32[6] = cat([%y, %y, %y], 0)\n"
            "return (%y, %cat)\n");
}

TEST(Graph, EraseRefusesUsedNodesOutputsAndInputs) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value n = b.call1("neg", {x});
  Value e = b.call1("exp", {n});
  Value dead = b.call1("sin", {x});
  b.graph.set_outputs({e});
  EXPECT_TRUE(throws_error([&] { b.graph.erase(n.node); }, {"%neg", "still used by %exp"}));
  EXPECT_TRUE(throws_error([&] { b.graph.erase(e.node); }, {"%exp", "graph output"}));
  EXPECT_TRUE(throws_error([&] { b.graph.erase(x.node); }, {"%x", "input node"}));
  Graph other;
  EXPECT_TRUE(throws_error([&] { other.erase(n.node); }, {"not in this graph"}));
  EXPECT_EQ(b.graph.num_ops(), 3u);
  b.graph.erase(dead.node);
  EXPECT_EQ(b.graph.num_ops(), 2u);
  // Names stay reserved: a new sin is not confused with the erased one in logs.
  EXPECT_EQ(b.call1("sin", {x}).node->name, "sin_1");
}

TEST(Graph, AddOpChecksItsStack) {
  Graph g;
  Node& x = g.add_input(InputRole::UserArg, "x", ValueMeta::of(zeros({2})));
  const ops::OpDef& neg = testing::op_named("neg");
  EXPECT_TRUE(throws_error([&] { g.add_op(neg, {}, {}, {}); }, {"neg takes 1 arguments"}));
  EXPECT_TRUE(throws_error(
      [&] {
        g.add_op(neg, {Tensor()}, {TensorUse{3, -1, x.out()}}, {});
      },
      {"argument 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        g.add_op(neg, {Tensor()}, {TensorUse{0, -1, Value{}}}, {});
      },
      {"undefined value"}));
}

TEST(Graph, SideEffects) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Node* mul = b.call1("mul", {x, x}).node;
  Node* add_ = b.call1("add_", {x, x, 1}).node;
  Node* out = b.call1("add.out", {x, x, 1, x}).node;
  Node* rand = b.call1("rand", {std::vector<int64_t>{2}}).node;
  EXPECT_FALSE(mul->mutates());
  EXPECT_FALSE(mul->has_side_effects());
  EXPECT_TRUE(add_->mutates());
  EXPECT_TRUE(add_->has_side_effects());
  EXPECT_TRUE(out->mutates());
  EXPECT_FALSE(rand->mutates());
  EXPECT_TRUE(rand->has_side_effects());
  EXPECT_FALSE(x.node->mutates());
  EXPECT_FALSE(x.node->has_side_effects());
}

TEST(Graph, CloneIsIndependent) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value n = b.call1("neg", {x}, SourceLoc{"m.cpp", 1});
  Value e = b.call1("exp", {n}, SourceLoc{"m.cpp", 2});
  b.graph.set_outputs({e});
  std::string before = b.graph.str();

  Graph copy = b.graph.clone();
  EXPECT_EQ(copy.str(), before);
  EXPECT_EQ(copy.structural_key(), b.graph.structural_key());
  // The copy's uses and outputs point at the copy's own nodes.
  const auto& nodes = copy.nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[1]->uses[0].value.node, nodes[0].get());
  EXPECT_EQ(nodes[2]->uses[0].value.node, nodes[1].get());
  EXPECT_EQ(copy.outputs()[0].node, nodes[2].get());

  // Rewriting the copy leaves the original alone.
  copy.set_outputs({nodes[1]->out()});
  copy.erase(nodes[2].get());
  copy.rename(*copy.nodes()[0], "y");
  copy.nodes()[1]->loc = SourceLoc{"other.cpp", 9};
  EXPECT_EQ(b.graph.str(), before);
  EXPECT_EQ(copy.str(),
            "%y : f32[2] = input[user_arg](x)\n"
            "%neg : f32[2] = neg(%y)  # other.cpp:9\n"
            "return (%neg,)\n");
  // Names taken in the original are taken in the copy too.
  Node& again =
      copy.add_op(testing::op_named("neg"), {Tensor()}, {TensorUse{0, -1, copy.nodes()[0]->out()}},
                  {ValueMeta::of(zeros({2}))});
  EXPECT_EQ(again.name, "neg_1");
  std::vector<Tensor> in{tensor({1.0, 0.0})};
  EXPECT_TRUE(
      kiln::testing::all_close(interpret(b.graph, in)[0], tensor({std::exp(-1.0), 1.0}), 1e-6));
}

// Two graphs computing (x * w + bias).sum(dim) under different names and source lines.
Graph linear(std::string_view prefix, int line, std::vector<int64_t> x_size = {2, 3},
             Scalar alpha = 1, int64_t dim = 1) {
  GraphBuilder b;
  std::string p(prefix);
  Value x = b.input(p + "x", zeros(x_size));
  Value w = b.input(p + "w", zeros({3}), InputRole::Parameter);
  Value bias = b.input(p + "b", zeros({3}), InputRole::Parameter);
  SourceLoc loc{"f.cpp", static_cast<uint32_t>(line)};
  Value m = b.call1("mul", {x, w}, loc);
  Value a = b.call1("add", {m, bias, alpha}, loc);
  Value s = b.call1("sum", {a, std::vector<int64_t>{dim}}, loc);
  b.graph.set_outputs({s});
  return std::move(b.graph);
}

TEST(StructuralKey, IgnoresNamesAndSourceLines) {
  EXPECT_EQ(linear("", 1).structural_key(), linear("other_", 42).structural_key());
}

TEST(StructuralKey, DiffersWhenAConstantOrSizeDiffers) {
  std::string base = linear("", 1).structural_key();
  EXPECT_NE(linear("", 1, {2, 3}, 2).structural_key(), base);
  EXPECT_NE(linear("", 1, {2, 3}, Scalar(1.0)).structural_key(), base);
  EXPECT_NE(linear("", 1, {2, 3}, 1, -1).structural_key(), base);
  EXPECT_NE(linear("", 1, {4, 3}).structural_key(), base);
}

TEST(StructuralKey, ComparesDoublesBitwise) {
  auto key = [](double eps) {
    GraphBuilder b;
    Value x = b.input("x", zeros({2, 2}));
    std::vector<Value> ln =
        b.call("native_layer_norm", {x, std::vector<int64_t>{2}, std::nullopt, std::nullopt, eps});
    b.graph.set_outputs({ln[0]});
    return b.graph.structural_key();
  };
  EXPECT_EQ(key(1e-5), key(1e-5));
  EXPECT_NE(key(1e-5), key(std::nextafter(1e-5, 1.0)));
  EXPECT_NE(key(0.0), key(-0.0));
}

TEST(StructuralKey, DiffersInRolesWiringAndOutputs) {
  auto key = [](InputRole role, bool swap, bool both_outputs) {
    GraphBuilder b;
    Value x = b.input("x", zeros({2}));
    Value y = b.input("y", zeros({2}), role);
    Value m = swap ? b.call1("mul", {y, x}) : b.call1("mul", {x, y});
    Value n = b.call1("neg", {m});
    b.graph.set_outputs(both_outputs ? std::vector<Value>{n, m} : std::vector<Value>{n});
    return b.graph.structural_key();
  };
  std::string base = key(InputRole::UserArg, false, false);
  EXPECT_EQ(key(InputRole::UserArg, false, false), base);
  EXPECT_NE(key(InputRole::Parameter, false, false), base);
  EXPECT_NE(key(InputRole::UserArg, true, false), base);
  EXPECT_NE(key(InputRole::UserArg, false, true), base);
}

TEST(StructuralKey, DiffersInInputMetadata) {
  auto key = [](const Tensor& example) {
    GraphBuilder b;
    Value x = b.input("x", example);
    b.graph.set_outputs({b.call1("neg", {x})});
    return b.graph.structural_key();
  };
  std::string base = key(zeros({2, 3}));
  EXPECT_EQ(key(zeros({2, 3})), base);
  EXPECT_NE(key(zeros({2, 3}, kFloat64)), base);
  EXPECT_NE(key(zeros({3, 2}).t()), base);  // same sizes, other strides
  EXPECT_NE(key(zeros({2, 3}).requires_grad_()), base);
}

}  // namespace
}  // namespace kiln::graph
