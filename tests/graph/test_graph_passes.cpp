// Dead code elimination, common subexpression elimination and the pass manager.
#include "graph/graph_builder.h"
#include "test_util.h"

namespace kiln::graph {
namespace {

using kiln::testing::values;
using testing::GraphBuilder;

bool run_dce(Graph& g) { return dead_code_elimination()->run(g); }
bool run_cse(Graph& g) { return common_subexpression_elimination()->run(g); }

TEST(DeadCodeElimination, RemovesDeadChainsButKeepsSideEffects) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value y = b.input("y", zeros({2}));
  Value buf = b.input("buf", zeros({2}), InputRole::Buffer);
  Value dead = b.call1("mul", {x, y});
  b.call1("neg", {dead});  // reads only a dead value: dead too
  b.call1("add_", {buf, x, 1});
  b.call1("rand", {std::vector<int64_t>{2}});
  Value live = b.call1("add", {x, y});
  b.graph.set_outputs({live});

  EXPECT_TRUE(run_dce(b.graph));
  EXPECT_EQ(b.graph.str(),
            "%x : f32[2] = input[user_arg](x)\n"
            "%y : f32[2] = input[user_arg](y)\n"
            "%buf : f32[2] = input[buffer](buf)\n"
            "%add_ : f32[2] = add_(%buf, %x, alpha=1)\n"
            "%rand : f32[2] = rand([2], dtype=None, device=None)\n"
            "%add : f32[2] = add(%x, %y, alpha=1)\n"
            "return (%add,)\n");
  EXPECT_FALSE(run_dce(b.graph));
  EXPECT_EQ(b.graph.num_inputs(), 3u);  // unused inputs stay: they are the calling convention
}

TEST(DeadCodeElimination, KeepsMultiOutputNodesWithOneUsedOutput) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2, 2}));
  std::vector<Value> ln =
      b.call("native_layer_norm", {x, std::vector<int64_t>{2}, std::nullopt, std::nullopt, 1e-5});
  b.graph.set_outputs({ln[2]});
  EXPECT_FALSE(run_dce(b.graph));
  EXPECT_EQ(b.graph.num_ops(), 1u);
}

TEST(CommonSubexpressionElimination, MergesDuplicateMuls) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value y = b.input("y", zeros({2}));
  Value m1 = b.call1("mul", {x, y});
  Value m2 = b.call1("mul", {x, y});
  Value s = b.call1("add", {m1, m2});
  b.graph.set_outputs({s, m2});
  EXPECT_TRUE(run_cse(b.graph));
  EXPECT_EQ(b.graph.str(),
            "%x : f32[2] = input[user_arg](x)\n"
            "%y : f32[2] = input[user_arg](y)\n"
            "%mul : f32[2] = mul(%x, %y)\n"
            "%add : f32[2] = add(%mul, %mul, alpha=1)\n"
            "return (%add, %mul)\n");
  EXPECT_FALSE(run_cse(b.graph));
  std::vector<Tensor> in{tensor({1.0, 2.0}), tensor({3.0, 5.0})};
  std::vector<Tensor> out = interpret(b.graph, in);
  EXPECT_EQ(values(out[0]), (std::vector<double>{6, 20}));
}

TEST(CommonSubexpressionElimination, MergesChainsOfDuplicates) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value n1 = b.call1("neg", {x});
  Value n2 = b.call1("neg", {x});
  Value e1 = b.call1("exp", {n1});
  Value e2 = b.call1("exp", {n2});  // the same once %neg_1 became %neg
  b.graph.set_outputs({b.call1("add", {e1, e2})});
  EXPECT_TRUE(run_cse(b.graph));
  EXPECT_EQ(b.graph.num_ops(), 3u);
}

TEST(CommonSubexpressionElimination, KeepsDifferentConstantsApart) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value y = b.input("y", zeros({2}));
  Value a1 = b.call1("add", {x, y, 1});
  Value a2 = b.call1("add", {x, y, 2});
  Value a3 = b.call1("add", {x, y, Scalar(1.0)});  // 1.0 is not the int 1: kept exact
  Value a4 = b.call1("add", {y, x, 1});            // other wiring
  b.graph.set_outputs({a1, a2, a3, a4});
  EXPECT_FALSE(run_cse(b.graph));
  EXPECT_EQ(b.graph.num_ops(), 4u);
}

TEST(CommonSubexpressionElimination, NeverMergesRandomOps) {
  GraphBuilder b;
  Value r1 = b.call1("rand", {std::vector<int64_t>{2}});
  Value r2 = b.call1("rand", {std::vector<int64_t>{2}});
  b.graph.set_outputs({b.call1("add", {r1, r2})});
  EXPECT_FALSE(run_cse(b.graph));
  EXPECT_EQ(b.graph.num_ops(), 3u);
}

TEST(CommonSubexpressionElimination, DoesNotMergeAcrossAnInPlaceWrite) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value y = b.input("y", zeros({2}));
  Value m1 = b.call1("mul", {x, y});
  b.call1("add_", {x, y, 1});
  Value m2 = b.call1("mul", {x, y});  // reads the updated x
  b.graph.set_outputs({m1, m2});
  EXPECT_FALSE(run_cse(b.graph));
  std::vector<Tensor> in{tensor({1.0, 2.0}), tensor({3.0, 5.0})};
  std::vector<Tensor> out = interpret(b.graph, in);
  EXPECT_EQ(values(out[0]), (std::vector<double>{3, 10}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{12, 35}));  // x became [4, 7]
}

TEST(CommonSubexpressionElimination, DoesNotMergeValuesWrittenLater) {
  // Merging %mul_1 into %mul would make add_ (on %mul_1, through a view) write %mul too.
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value y = b.input("y", zeros({2}));
  Value m1 = b.call1("mul", {x, y});
  Value m2 = b.call1("mul", {x, y});
  Value v = b.call1("view", {m2, std::vector<int64_t>{2}});
  b.call1("add_", {v, x, 1});
  b.graph.set_outputs({m1, m2});
  EXPECT_FALSE(run_cse(b.graph));
  std::vector<Tensor> in{tensor({1.0, 2.0}), tensor({3.0, 5.0})};
  std::vector<Tensor> out = interpret(b.graph, in);
  EXPECT_EQ(values(out[0]), (std::vector<double>{3, 10}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{4, 12}));
}

TEST(CommonSubexpressionElimination, MergesDuplicateViewsWhenNothingWrites) {
  GraphBuilder b;
  Value w = b.input("w", zeros({2, 3}), InputRole::Parameter);
  Value t1 = b.call1("t", {w});
  Value t2 = b.call1("t", {w});
  b.graph.set_outputs({b.call1("add", {t1, b.call1("neg", {t2})})});
  EXPECT_TRUE(run_cse(b.graph));
  EXPECT_EQ(b.graph.num_ops(), 3u);
}

TEST(PassManager, RunsPassesInOrderAndReportsChange) {
  GraphBuilder b;
  Value x = b.input("x", zeros({2}));
  Value n1 = b.call1("neg", {x});
  Value n2 = b.call1("neg", {x});
  b.call1("exp", {x});  // dead
  b.graph.set_outputs({b.call1("add", {n1, n2})});
  PassManager pm;
  pm.add(common_subexpression_elimination()).add(dead_code_elimination());
  EXPECT_EQ(pm.names(), (std::vector<std::string_view>{"common_subexpression_elimination",
                                                       "dead_code_elimination"}));
  EXPECT_TRUE(pm.run(b.graph));
  EXPECT_EQ(b.graph.str(),
            "%x : f32[2] = input[user_arg](x)\n"
            "%neg : f32[2] = neg(%x)\n"
            "%add : f32[2] = add(%neg, %neg, alpha=1)\n"
            "return (%add,)\n");
  EXPECT_FALSE(pm.run(b.graph));
}

}  // namespace
}  // namespace kiln::graph
