// Tracing the reference models with symbolic input sizes: capture's TraceSession gives the
// listed input dimensions symbols of a ShapeEnv, and the one traced graph, interpreted with those
// symbols bound per call, matches the eager model at other sizes, which the environment's
// GuardChecker accepts; sizes that break a recorded guard are rejected.
#include "capture/symbolic_interpreter.h"
#include "capture/trace_session.h"
#include "test_util.h"

#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <kiln/symbolic/guard_checker.h>
#include <kiln/symbolic/shape_env.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace {

using capture::DynamicDim;
using testing::all_close;

// One model traced with symbolic sizes, and what it takes to run its graph again.
struct DynamicTrace {
  std::shared_ptr<symbolic::ShapeEnv> env;
  std::vector<DynamicDim> dims;
  graph::Graph graph;
  std::vector<capture::InputBinding> bindings;

  // The graph's inputs for a call with `arg`: module tensors as traced, the argument in its place.
  std::vector<Tensor> inputs(const Tensor& arg) const {
    std::vector<Tensor> in;
    for (const capture::InputBinding& b : bindings) {
      in.push_back(b.kind == capture::InputBinding::Kind::UserArg ? arg : b.held);
    }
    return in;
  }
  // The sizes the GuardChecker reads: one per create_symbol call (dims, in order).
  std::vector<int64_t> checked_sizes(const Tensor& arg) const {
    std::vector<int64_t> sizes;
    for (const DynamicDim& d : dims) sizes.push_back(arg.size(d.dim));
    return sizes;
  }
  std::string output_sizes() const { return sizes_str(graph.outputs()[0].meta().sizes); }
  std::string input_sizes() const {
    for (const graph::Node* n : graph.inputs()) {
      if (n->role == graph::InputRole::UserArg) return sizes_str(n->outputs[0].sizes);
    }
    return "no user input";
  }
  static std::string sizes_str(const SymDimVector& sizes) {
    std::string s;
    for (const SymInt& x : sizes) s += (s.empty() ? "" : ", ") + x.str();
    return "[" + s + "]";
  }
};

// Traces `model` in eval mode without grad on `example`, dims `dims` dynamic, into one graph.
DynamicTrace trace_dynamic(const std::shared_ptr<nn::Module>& model, const Tensor& example,
                           std::vector<DynamicDim> dims) {
  model->eval();
  autograd::NoGradGuard no_grad;
  DynamicTrace t;
  t.env = symbolic::ShapeEnv::create();
  t.dims = dims;
  capture::TraceSession::Config config;
  config.function_name = "trace_dynamic";
  config.fullgraph = true;
  config.grad_enabled = false;
  config.module = model;
  config.shape_env = t.env;
  config.dynamic_dims = std::move(dims);
  config.compile = [](const graph::Graph& g, std::span<const Tensor>, size_t) {
    return capture::symbolic_interpreter(g);
  };
  capture::TraceSession session(std::move(config));
  const capture::Leaves args{ops::IValue(example)};
  session.trace(args, [&model](const capture::Leaves& a) {
    return capture::Leaves{ops::IValue(model->forward(a[0].to_tensor()))};
  });
  EXPECT_EQ(session.graphs().size(), 1u);
  if (!session.graphs().empty()) {
    t.graph = session.graphs()[0].graph.clone();
    t.bindings = session.graphs()[0].bindings;
  }
  return t;
}

// Runs the traced graph on `arg` and compares it with eager; the guards must accept `arg`.
void expect_like_eager(const DynamicTrace& t, nn::Module& model, const Tensor& arg,
                       const std::string& what) {
  autograd::NoGradGuard no_grad;
  const symbolic::GuardChecker checker(*t.env);
  const std::vector<int64_t> sizes = t.checked_sizes(arg);
  EXPECT_TRUE(checker.check(sizes))
      << what << ": " << checker.explain_failure(sizes) << "\nguards:\n"
      << t.env->guards_str();
  const Tensor eager = model.forward(arg);
  const std::vector<Tensor> out = capture::symbolic_interpreter(t.graph)(t.inputs(arg));
  ASSERT_FALSE(out.empty()) << what;
  EXPECT_TRUE(all_close(out[0], eager, 1e-5, 1e-6)) << what;
}

bool guards_accept(const DynamicTrace& t, std::vector<int64_t> sizes) {
  return symbolic::GuardChecker(*t.env).check(sizes);
}

TEST(TraceModelsDynamic, MlpWithSymbolicBatch) {
  manual_seed(1);
  auto model = models::mlp({.in_features = 16, .hidden_features = {32, 32}, .out_features = 8});
  const DynamicTrace t = trace_dynamic(model, randn({4, 16}), {{0, 0}});
  EXPECT_EQ(t.input_sizes(), "[s0, 16]");
  EXPECT_EQ(t.output_sizes(), "[s0, 8]");
  for (int64_t batch : {3, 5, 64}) {
    expect_like_eager(t, *model, randn({batch, 16}), fmt::format("mlp batch {}", batch));
  }
  // Batch 1 was specialized away by the trace (0/1 specialization): the checker says no.
  EXPECT_FALSE(guards_accept(t, {1}));
}

TEST(TraceModelsDynamic, BertWithSymbolicBatchAndSequence) {
  manual_seed(3);
  auto model = models::bert({.vocab_size = 100,
                             .hidden_size = 32,
                             .num_hidden_layers = 2,
                             .num_attention_heads = 2,
                             .intermediate_size = 64,
                             .max_position_embeddings = 64});
  const DynamicTrace t = trace_dynamic(model, randint(0, 100, {2, 12}), {{0, 0}, {0, 1}});
  EXPECT_EQ(t.input_sizes(), "[s0, s1]");
  EXPECT_EQ(t.output_sizes(), "[s0, s1, 32]");
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{3, 7}, {5, 33}, {4, 64}, {2, 2}}) {
    expect_like_eager(t, *model, randint(0, 100, {batch, seq}),
                      fmt::format("bert batch {} seq {}", batch, seq));
  }
  // The position table has 64 rows: the embeddings' check became a guard on the sequence length.
  EXPECT_FALSE(guards_accept(t, {3, 65})) << t.env->guards_str();
  EXPECT_THROW(model->forward(randint(0, 100, {3, 65})), Error);
}

TEST(TraceModelsDynamic, Gpt2WithSymbolicBatchAndSequence) {
  manual_seed(4);
  auto model =
      models::gpt2({.vocab_size = 100, .n_positions = 64, .n_embd = 32, .n_layer = 2, .n_head = 2});
  const DynamicTrace t = trace_dynamic(model, randint(0, 100, {2, 12}), {{0, 0}, {0, 1}});
  EXPECT_EQ(t.input_sizes(), "[s0, s1]");
  EXPECT_EQ(t.output_sizes(), "[s0, s1, 100]");
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{3, 7}, {5, 33}, {2, 64}}) {
    expect_like_eager(t, *model, randint(0, 100, {batch, seq}),
                      fmt::format("gpt2 batch {} seq {}", batch, seq));
  }
  EXPECT_FALSE(guards_accept(t, {3, 65})) << t.env->guards_str();
}

TEST(TraceModelsDynamic, ResNet18WithSymbolicBatch) {
  manual_seed(2);
  auto model = models::resnet18(10);
  const DynamicTrace t = trace_dynamic(model, randn({2, 3, 32, 32}), {{0, 0}});
  EXPECT_EQ(t.input_sizes(), "[s0, 3, 32, 32]");
  EXPECT_EQ(t.output_sizes(), "[s0, 10]");
  for (int64_t batch : {3, 4, 5}) {
    expect_like_eager(t, *model, randn({batch, 3, 32, 32}),
                      fmt::format("resnet18 batch {}", batch));
  }
}

TEST(TraceModelsDynamic, ResNet18WithSymbolicBatchHeightAndWidth) {
  manual_seed(2);
  auto model = models::resnet18(10);
  const DynamicTrace t = trace_dynamic(model, randn({2, 3, 32, 40}), {{0, 0}, {0, 2}, {0, 3}});
  EXPECT_EQ(t.input_sizes(), "[s0, 3, s1, s2]");
  EXPECT_EQ(t.output_sizes(), "[s0, 10]");
  // The trace branched on whether each stage's spatial size is 1 (layout checks): at 32 rows the
  // last stage has 1 row, at 40 columns 2. Sizes keeping those answers reuse the graph.
  for (auto [batch, h, w] :
       {std::tuple<int64_t, int64_t, int64_t>{3, 24, 36}, {5, 17, 64}, {2, 31, 47}}) {
    expect_like_eager(t, *model, randn({batch, 3, h, w}),
                      fmt::format("resnet18 {}x3x{}x{}", batch, h, w));
  }
  EXPECT_FALSE(guards_accept(t, {2, 40, 40})) << t.env->guards_str();  // 2 rows at the end
  EXPECT_FALSE(guards_accept(t, {2, 24, 32})) << t.env->guards_str();  // 1 column at the end
}

// GPT-2 and BERT with an attention mask: two arguments, their (batch, seq) dims duck-sized to
// the same symbols; GPT-2 builds its causal mask with symbolic sizes.
TEST(TraceModelsDynamic, TransformersWithAnAttentionMask) {
  autograd::NoGradGuard no_grad;
  manual_seed(5);
  auto gpt2 =
      models::gpt2({.vocab_size = 100, .n_positions = 64, .n_embd = 32, .n_layer = 2, .n_head = 2});
  auto bert = models::bert({.vocab_size = 100,
                            .hidden_size = 32,
                            .num_hidden_layers = 2,
                            .num_attention_heads = 2,
                            .intermediate_size = 64,
                            .max_position_embeddings = 64});
  // Masks with trailing padding in the second row.
  auto mask_of = [](int64_t batch, int64_t seq) {
    Tensor m = ones({batch, seq}, TensorOptions(DType::Int64));
    m.select(0, 1).narrow(0, seq / 2, seq - seq / 2).fill_(0);
    return m;
  };
  std::vector<std::pair<std::string, std::function<Tensor(const Tensor&, const Tensor&)>>> models{
      {"gpt2", [&](const Tensor& ids, const Tensor& m) { return gpt2->forward(ids, m); }},
      {"bert", [&](const Tensor& ids, const Tensor& m) {
         return bert->forward(ids, m, Tensor()).last_hidden_state;
       }}};
  gpt2->eval();
  bert->eval();
  for (const auto& entry : models) {
    const std::string& name = entry.first;
    const auto& forward =
        entry.second;  // a reference, not a structured binding: lambdas capture it
    auto env = symbolic::ShapeEnv::create();
    capture::TraceSession::Config config;
    config.function_name = name;
    config.fullgraph = true;
    config.grad_enabled = false;
    config.shape_env = env;
    config.dynamic_dims = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    config.compile = [](const graph::Graph& g, std::span<const Tensor>, size_t) {
      return capture::symbolic_interpreter(g);
    };
    capture::TraceSession session(std::move(config));
    const capture::Leaves args{ops::IValue(randint(0, 100, {2, 12})), ops::IValue(mask_of(2, 12))};
    session.trace(args, [&forward](const capture::Leaves& a) {
      return capture::Leaves{ops::IValue(forward(a[0].to_tensor(), a[1].to_tensor()))};
    });
    ASSERT_EQ(session.graphs().size(), 1u) << name;
    const capture::TracedGraph& traced = session.graphs()[0];
    EXPECT_EQ(DynamicTrace::sizes_str(traced.graph.outputs()[0].meta().sizes).substr(0, 8),
              "[s0, s1,")
        << name;
    for (auto [batch, seq] : {std::pair<int64_t, int64_t>{3, 7}, {5, 33}, {2, 64}}) {
      const Tensor ids = randint(0, 100, {batch, seq}), mask = mask_of(batch, seq);
      const std::vector<int64_t> sizes{batch, seq, batch, seq};
      EXPECT_TRUE(symbolic::GuardChecker(*env).check(sizes)) << name << "\n" << env->guards_str();
      std::vector<Tensor> inputs;
      for (const capture::InputBinding& b : traced.bindings) {
        inputs.push_back(b.kind == capture::InputBinding::Kind::UserArg ? (b.leaf == 0 ? ids : mask)
                                                                        : b.held);
      }
      const std::vector<Tensor> out = capture::symbolic_interpreter(traced.graph)(inputs);
      EXPECT_TRUE(all_close(out[0], forward(ids, mask), 1e-5, 1e-6))
          << name << " batch " << batch << " seq " << seq;
    }
    // A mask whose length differs from the ids' breaks the duck sizing the trace relied on.
    EXPECT_FALSE(symbolic::GuardChecker(*env).check(std::vector<int64_t>{3, 7, 3, 8})) << name;
  }
}

// sdpa's default scale 1/sqrt(E) is left to the fused op, which reads E when it runs: a trace
// with a symbolic head dim scales by the call's own E, not the example's.
TEST(TraceModelsDynamic, AttentionWithASymbolicHeadDimScalesPerCall) {
  autograd::NoGradGuard no_grad;
  auto env = symbolic::ShapeEnv::create();
  capture::TraceSession::Config config;
  config.function_name = "attention";
  config.fullgraph = true;
  config.grad_enabled = false;
  config.shape_env = env;
  config.dynamic_dims = {{0, -1}};
  config.compile = [](const graph::Graph& g, std::span<const Tensor>, size_t) {
    return capture::symbolic_interpreter(g);
  };
  capture::TraceSession session(std::move(config));
  auto attention = [](const Tensor& q) { return scaled_dot_product_attention(q, q * 0.5, q); };
  const capture::Leaves args{ops::IValue(randn({2, 4, 8}))};
  session.trace(args, [&attention](const capture::Leaves& a) {
    return capture::Leaves{ops::IValue(attention(a[0].to_tensor()))};
  });
  ASSERT_EQ(session.graphs().size(), 1u);
  const graph::Graph& g = session.graphs()[0].graph;
  EXPECT_EQ(DynamicTrace::sizes_str(g.outputs()[0].meta().sizes), "[2, 4, s0]");
  for (int64_t e : {3, 16}) {
    const Tensor q = randn({2, 4, e});
    EXPECT_TRUE(symbolic::GuardChecker(*env).check(std::vector<int64_t>{e})) << env->guards_str();
    std::vector<Tensor> inputs;  // q, and any constant the trace captured
    for (const capture::InputBinding& b : session.graphs()[0].bindings) {
      inputs.push_back(b.kind == capture::InputBinding::Kind::UserArg ? q : b.held);
    }
    const std::vector<Tensor> out = capture::symbolic_interpreter(g)(inputs);
    EXPECT_TRUE(all_close(out[0], attention(q), 1e-5, 1e-6)) << "head dim " << e;
  }
}

TEST(TraceModelsDynamic, DynamicDimsNeedAShapeEnv) {
  capture::TraceSession::Config config;
  config.function_name = "f";
  config.dynamic_dims = {{0, 0}};
  capture::TraceSession session(std::move(config));
  const capture::Leaves args{ops::IValue(randn({3, 4}))};
  EXPECT_THROW(session.trace(args, [](const capture::Leaves& a) { return a; }), Error);
}

}  // namespace
}  // namespace kiln
