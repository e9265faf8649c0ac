// split_graph and parameter_bucket_cuts: the pieces, run in order, compute what the unsplit graph
// computes (its interpretation is the reference); the wiring across the cuts; the cuts that must
// move (an in-place write and its target, a parameter view and its reader); symbolic sizes bound
// in every piece; where DDP's bucket limits put the cuts.
#include "graph/graph_builder.h"
#include "test_util.h"

#include "capture/symbolic_interpreter.h"
#include "graph/parameter_bucket_cuts.h"
#include "graph/split_graph.h"

#include <kiln/kiln.h>

#include <algorithm>
#include <memory>
#include <numeric>

namespace kiln::graph {
namespace {

using kiln::testing::all_close;
using testing::GraphBuilder;
using Kind = PieceSource::Kind;

std::vector<Tensor> run_split(const SplitGraph& split, std::span<const Tensor> inputs) {
  return run_pieces(split, inputs, [&split](size_t k, std::span<const Tensor> in) {
    return interpret(split.pieces[k].graph, in);
  });
}

// x [2, 3]; parameters w1 [4, 3], b1 [4], w2 [2, 4]. Ops, by position:
//   0 t(w1)  1 addmm(b1, x, t)  2 tanh  3 t(w2)  4 mm(tanh, t_1).  Outputs: the mm and the addmm.
struct Mlp {
  GraphBuilder b;
  Value x, w1, b1, w2, h, y;
  Mlp() {
    x = b.input("x", zeros({2, 3}));
    w1 = b.input("w1", zeros({4, 3}).requires_grad_(), InputRole::Parameter);
    b1 = b.input("b1", zeros({4}).requires_grad_(), InputRole::Parameter);
    w2 = b.input("w2", zeros({2, 4}).requires_grad_(), InputRole::Parameter);
    h = b.call1("addmm", {b1, x, b.call1("t", {w1})});
    Value a = b.call1("tanh", {h});
    y = b.call1("mm", {a, b.call1("t", {w2})});
    b.graph.set_outputs({y, h});
  }
  std::vector<Tensor> inputs() const {
    manual_seed(3);
    return {randn({2, 3}), randn({4, 3}).requires_grad_(), randn({4}).requires_grad_(),
            randn({2, 4}).requires_grad_()};
  }
};

TEST(GraphSplit, PiecesRunInOrderComputeTheWholeGraph) {
  Mlp m;
  const std::vector<Tensor> in = m.inputs();
  const std::vector<Tensor> whole = interpret(m.b.graph, in);
  for (std::vector<size_t> cuts : std::vector<std::vector<size_t>>{{}, {2}, {3}, {2, 3}, {1, 4}}) {
    const SplitGraph split = split_graph(m.b.graph, cuts);
    const std::vector<Tensor> pieces = run_split(split, in);
    ASSERT_EQ(pieces.size(), 2u);
    for (size_t i = 0; i < 2; ++i)
      EXPECT_TRUE(all_close(pieces[i], whole[i], 0, 0))
          << fmt::format("cuts {}, output {}", cuts, i);
  }
}

TEST(GraphSplit, PiecesReadWhatCrossesTheCut) {
  Mlp m;
  const SplitGraph split = split_graph(m.b.graph, {2});
  ASSERT_EQ(split.pieces.size(), 2u);
  const GraphPiece& first = split.pieces[0];
  const GraphPiece& second = split.pieces[1];
  EXPECT_EQ(first.first_op, 0u);
  EXPECT_EQ(first.end_op, 2u);
  EXPECT_EQ(second.first_op, 2u);
  EXPECT_EQ(second.end_op, 5u);
  // The first piece reads w1, b1 and x (in the order its nodes first read them) and gives the
  // addmm, which the second piece and the graph's outputs read.
  EXPECT_EQ(first.inputs,
            (std::vector<PieceSource>{
                {Kind::GraphInput, 0, 1}, {Kind::GraphInput, 0, 2}, {Kind::GraphInput, 0, 0}}));
  EXPECT_EQ(first.graph.num_ops(), 2u);
  ASSERT_EQ(first.graph.outputs().size(), 1u);
  EXPECT_EQ(first.graph.outputs()[0].node->name, "addmm");
  EXPECT_EQ(second.inputs,
            (std::vector<PieceSource>{{Kind::PieceOutput, 0, 0}, {Kind::GraphInput, 0, 3}}));
  // Graph inputs keep their role and label; a value of an earlier piece is a user argument.
  const std::vector<Node*> second_inputs = second.graph.inputs();
  EXPECT_EQ(second_inputs[0]->role, InputRole::UserArg);
  EXPECT_EQ(second_inputs[1]->role, InputRole::Parameter);
  EXPECT_EQ(second_inputs[1]->label, "w2");
  EXPECT_EQ(split.outputs,
            (std::vector<PieceSource>{{Kind::PieceOutput, 1, 0}, {Kind::PieceOutput, 0, 0}}));
}

TEST(GraphSplit, AParameterViewStaysWithItsReader) {
  Mlp m;
  // 1 falls between t(w1) and its addmm: it moves to 0 (no piece before). 4 falls between t(w2)
  // and its mm: it moves to 3.
  EXPECT_EQ(legal_cuts(m.b.graph, {1, 4}), (std::vector<size_t>{3}));
  // Repeated cuts, cuts at the ends and unsorted ones make no empty pieces.
  EXPECT_EQ(legal_cuts(m.b.graph, {5, 3, 0, 3, 2}), (std::vector<size_t>{2, 3}));
}

TEST(GraphSplit, AnInPlaceWriteStaysWithWhatTouchesItsTarget) {
  // 0 m = x * y  1 e = exp(m)  2 m += y  3 r = m * e  4 q = exp(r): m is made, read, written
  // and read again in 0-3; only 4 may begin a piece.
  GraphBuilder b;
  Value x = b.input("x", zeros({3}));
  Value y = b.input("y", zeros({3}));
  Value m = b.call1("mul", {x, y});
  Value e = b.call1("exp", {m});
  b.call1("add_", {m, y, 1});
  Value r = b.call1("mul", {m, e});
  Value q = b.call1("exp", {r});
  b.graph.set_outputs({q, r});
  EXPECT_EQ(legal_cuts(b.graph, {1, 2, 3, 4}), (std::vector<size_t>{4}));
  const std::vector<Tensor> in{tensor({0.5, -1.0, 2.0}), tensor({1.5, 0.25, -0.5})};
  const std::vector<Tensor> whole = interpret(b.graph, in);
  const std::vector<Tensor> pieces = run_split(split_graph(b.graph, {2}), in);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(all_close(pieces[i], whole[i], 0, 0)) << i;
}

TEST(GraphSplit, AWriteIntoAGraphInputThroughAViewHappensOnce) {
  // 0 s = sin(x)  1 v = view(x)  2 v += 1  3 c = cos(x): x's readers and writers stay together,
  // and the write reaches the caller's tensor as the unsplit graph's does.
  GraphBuilder b;
  Value x = b.input("x", zeros({2, 2}));
  Value one = b.input("one", zeros({4}));
  Value s = b.call1("sin", {x});
  Value v = b.call1("view", {x, std::vector<int64_t>{4}});
  b.call1("add_", {v, one, 1});
  Value c = b.call1("cos", {x});
  b.graph.set_outputs({s, c});
  EXPECT_EQ(legal_cuts(b.graph, {1, 2, 3}), (std::vector<size_t>{}));
  const Tensor x0 = tensor({0.1, 0.2, 0.3, 0.4}).view({2, 2});
  Tensor x_whole = x0.clone(), x_split = x0.clone();
  const Tensor ones4 = ones({4});
  const std::vector<Tensor> whole = interpret(b.graph, std::vector<Tensor>{x_whole, ones4});
  const std::vector<Tensor> pieces =
      run_split(split_graph(b.graph, {1, 2, 3}), std::vector<Tensor>{x_split, ones4});
  EXPECT_TRUE(all_close(x_split, x_whole, 0, 0));
  EXPECT_TRUE(all_close(x_whole, x0 + 1.0, 0, 0));
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(all_close(pieces[i], whole[i], 0, 0)) << i;
}

TEST(GraphSplit, AValueSkipsThePiecesThatDoNotReadIt) {
  // 0 a = exp(x)  1 b = sin(x)  2 c = cos(x)  3 d = a * c; outputs d, b, and x itself.
  GraphBuilder g;
  Value x = g.input("x", zeros({3}));
  Value a = g.call1("exp", {x});
  Value b = g.call1("sin", {x});
  Value c = g.call1("cos", {x});
  Value d = g.call1("mul", {a, c});
  g.graph.set_outputs({d, b, x});
  const SplitGraph split = split_graph(g.graph, {1, 2});
  ASSERT_EQ(split.pieces.size(), 3u);
  EXPECT_EQ(split.pieces[1].inputs, (std::vector<PieceSource>{{Kind::GraphInput, 0, 0}}));
  EXPECT_EQ(split.pieces[2].inputs,
            (std::vector<PieceSource>{{Kind::GraphInput, 0, 0}, {Kind::PieceOutput, 0, 0}}));
  EXPECT_EQ(split.outputs,
            (std::vector<PieceSource>{
                {Kind::PieceOutput, 2, 0}, {Kind::PieceOutput, 1, 0}, {Kind::GraphInput, 0, 0}}));
  const std::vector<Tensor> in{tensor({0.5, -1.0, 2.0})};
  const std::vector<Tensor> whole = interpret(g.graph, in);
  const std::vector<Tensor> pieces = run_split(split, in);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(all_close(pieces[i], whole[i], 0, 0)) << i;
}

// A graph traced with symbolic sizes: a piece whose inputs do not bind a symbol it reads (the
// flattened [3*s0] activation) is given the graph input that does, and each piece runs for
// sizes other than the traced ones.
TEST(GraphSplit, SymbolicSizesAreBoundInEveryPiece) {
  auto split = std::make_shared<SplitGraph>();
  NamedBackend splitting{"splitting",
                         [split](const Graph& g, std::span<const Tensor>, const BackendContext&) {
                           std::vector<size_t> every_op(g.num_ops());
                           std::iota(every_op.begin(), every_op.end(), size_t{0});
                           *split = split_graph(g, every_op);
                           std::vector<CompiledGraph> pieces;
                           for (const GraphPiece& p : split->pieces)
                             pieces.push_back(capture::symbolic_interpreter(p.graph));
                           return CompiledGraph([pieces, split](std::span<const Tensor> in) {
                             return run_pieces(
                                 *split, in,
                                 [&](size_t k, std::span<const Tensor> x) { return pieces[k](x); });
                           });
                         },
                         BackendTraits{.symbolic_graphs = true}};
  auto f = compile([](const Tensor& x) { return (x.flatten() * 2.0).exp(); },
                   {.dynamic = true, .backend = splitting});
  for (int64_t rows : {5, 7}) {
    const Tensor x = arange(rows * 3, TensorOptions(kFloat32)).view({rows, 3}) * 0.1;
    EXPECT_TRUE(all_close(f(x), (x.flatten() * 2.0).exp(), 1e-6, 1e-7)) << rows;
  }
  ASSERT_GE(split->pieces.size(), 2u);
  for (size_t k = 1; k < split->pieces.size(); ++k) {
    const auto& inputs = split->pieces[k].inputs;
    EXPECT_NE(std::find(inputs.begin(), inputs.end(), PieceSource{Kind::GraphInput, 0, 0}),
              inputs.end())
        << "piece " << k << " cannot bind s0:\n"
        << split->pieces[k].graph.str();
  }
}

TEST(ParameterBucketCuts, CutWhereTheReverseRunningTotalReachesTheLimit) {
  // Walking back, a parameter counts where it is computed with, views included: the mm reads
  // w2 (32 bytes, through t(w2)), the addmm b1 and w1 (16 + 48 bytes).
  Mlp m;
  EXPECT_EQ(parameter_bucket_cuts(m.b.graph, {1000}), (std::vector<size_t>{}));
  // 32 bytes reach a 32-byte first bucket: the addmm starts the next one, cut right after it.
  EXPECT_EQ(parameter_bucket_cuts(m.b.graph, {32, 1000}), (std::vector<size_t>{2}));
  EXPECT_EQ(parameter_bucket_cuts(m.b.graph, {1}), (std::vector<size_t>{2}));
  // 32 < 40: the addmm's parameters join w2's bucket.
  EXPECT_EQ(parameter_bucket_cuts(m.b.graph, {40}), (std::vector<size_t>{}));
  const SplitGraph split = split_graph(m.b.graph, parameter_bucket_cuts(m.b.graph, {1}));
  ASSERT_EQ(split.pieces.size(), 2u);
  EXPECT_EQ(split.pieces[0].graph.num_ops(), 2u);  // t(w1), addmm
}

TEST(ParameterBucketCuts, FrozenParametersAndOtherInputsCountNothing) {
  GraphBuilder b;
  Value x = b.input("x", zeros({100}));
  Value frozen = b.input("frozen", zeros({100}), InputRole::Parameter);
  Value w = b.input("w", zeros({4}).requires_grad_(), InputRole::Parameter);
  Value y = b.call1("mul", {x, frozen});
  b.graph.set_outputs({b.call1("sum", {b.call1("mul", {y, b.call1("sum", {w})})})});
  // Only w (16 bytes) counts: it fills one 1-byte bucket, and nothing starts another.
  EXPECT_EQ(parameter_bucket_cuts(b.graph, {1}), (std::vector<size_t>{}));
}

}  // namespace
}  // namespace kiln::graph
