// Every op-info sample through the inductor against eager: for each op, one compiled function
// runs all its samples that eager accepts (one graph of prims, generated kernels and extern
// calls), forward, under the same seed for random ops; values within the op's sample tolerance
// (float32 at most 1e-5 relative unless the op's declaration says otherwise), exact for integer
// and bool results; arguments an op writes compare too.
#include "capture/capture_test_util.h"
#include "opinfo_selection.h"
#include "test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <set>
#include <string>

namespace kiln {
namespace {

using ops::IValue;
using ops::OpDef;
using ops::OpRegistry;
using ops::Stack;

// KILN_INDUCTOR_OPS=a,b restricts the sweep to those ops (full names).
bool selected(const OpDef& op) { return testing::selected_by("KILN_INDUCTOR_OPS", op); }

// The tensors of a sample's arguments, flattened (list elements included), cloned.
std::vector<Tensor> sample_tensors(const Stack& args) {
  std::vector<Tensor> out;
  for (const IValue& v : args) {
    if (v.is_tensor() && v.to_tensor().defined()) out.push_back(v.to_tensor().clone());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined()) out.push_back(t.clone());
      }
    }
  }
  return out;
}

// The sample's arguments with its tensors taken from `tensors` starting at `pos`.
Stack with_tensors(const Stack& args, const std::vector<Tensor>& tensors, size_t& pos) {
  Stack out = args;
  for (IValue& v : out) {
    if (v.is_tensor() && v.to_tensor().defined()) {
      v = IValue(tensors.at(pos++));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> list = v.to_tensor_list();
      for (Tensor& t : list) {
        if (t.defined()) t = tensors.at(pos++);
      }
      v = IValue(std::move(list));
    }
  }
  return out;
}

// Whether eager accepts a sample (error samples are the op tests' business).
bool eager_accepts(const OpDef& op, const Stack& args) {
  try {
    autograd::NoGradGuard no_grad;
    manual_seed(5);
    size_t pos = 0;
    const std::vector<Tensor> fresh = sample_tensors(args);
    ops::call(op, with_tensors(args, fresh, pos));
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Calls the op on every sample, its tensors taken in order from `tensors`; the defined outputs.
std::vector<Tensor> run_samples(const OpDef& op, const std::vector<Stack>& samples,
                                const std::vector<Tensor>& tensors) {
  std::vector<Tensor> outs;
  size_t pos = 0;
  for (const Stack& args : samples) {
    for (const Tensor& t : ops::call(op, with_tensors(args, tensors, pos))) {
      if (t.defined()) outs.push_back(t);
    }
  }
  return outs;
}

::testing::AssertionResult same(const Tensor& got, const Tensor& want, const OpDef& op, bool values,
                                double atol_scale = 1) {
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(got.dtype()) << " vs " << dtype_name(want.dtype());
  }
  if (got.sizes().vec() != want.sizes().vec()) return ::testing::AssertionFailure() << "sizes";
  if (!values || want.numel() == 0) return ::testing::AssertionSuccess();
  if (!is_floating_point(want.dtype())) {
    return testing::all_close(got.to(kFloat64), want.to(kFloat64), 0, 0);
  }
  const bool half = want.dtype() == DType::Float16 || want.dtype() == DType::BFloat16;
  const double rtol = half ? 1e-2 : std::max(1e-5, op.sample_rtol);
  const double atol = half ? 1e-2 : std::max(1e-6, op.sample_atol) * atol_scale;
  return testing::all_close(got.to(kFloat64), want.to(kFloat64), rtol, atol);
}

// Every sample compiled as one function per op; with `dynamic`, every dimension of size 2 or more
// is a symbol (the generated kernels take the sizes as arguments). Returns the ops whose graph
// ran on the interpreter instead of generated code.
std::set<std::string> sweep_forward(std::optional<bool> dynamic) {
  autograd::NoGradGuard no_grad;
  std::set<std::string> interpreted;
  int compared = 0;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples || !selected(*op)) continue;
    std::vector<Stack> samples;
    for (const ops::Sample& s : op->samples()) {
      if (eager_accepts(*op, s.args)) samples.push_back(s.args);
    }
    if (samples.empty()) continue;
    SCOPED_TRACE(op->full_name());
    if (std::getenv("KILN_SWEEP_TRACE")) std::cerr << "op " << op->full_name() << std::endl;
    auto run = [op, &samples](const std::vector<Tensor>& tensors) {
      return run_samples(*op, samples, tensors);
    };
    std::vector<Tensor> eager_in, compiled_in;
    for (const Stack& args : samples) {
      for (const Tensor& t : sample_tensors(args)) {
        eager_in.push_back(t);
        compiled_in.push_back(t.clone());
      }
    }
    manual_seed(5);
    const std::vector<Tensor> want = run(eager_in);
    CompileOptions options;
    options.dynamic = dynamic;
    auto compiled = compile(run, options);
    std::vector<Tensor> got;
    try {
      testing::LogCapture logs("perf_hints");
      manual_seed(5);
      got = compiled(compiled_in);
      if (logs.count("runs with the interpreter") > 0) interpreted.insert(op->full_name());
    } catch (const Error& e) {
      ADD_FAILURE() << "compiled: " << e.what();
      continue;
    }
    const bool values = !testing::uninitialized_output(*op);
    EXPECT_EQ(got.size(), want.size());
    if (got.size() != want.size()) continue;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(same(got[i], want[i], *op, values)) << "output " << i;
    }
    for (size_t i = 0; i < eager_in.size(); ++i) {
      EXPECT_TRUE(same(compiled_in[i], eager_in[i], *op, values)) << "argument tensor " << i;
    }
    ++compared;
  }
  EXPECT_GT(compared, 0);
  return interpreted;
}

TEST(InductorOpInfo, EverySampleCompiledMatchesEager) { sweep_forward(false); }

// The same with symbolic sizes: results match eager whether an op's graph is generated with
// symbols or (an op whose meta or decomposition still needs concrete sizes) interpreted; the
// interpreted ones are listed. It runs through since 2026-12-06 (its last failure, a slice with a
// negative start and no end overflowing int64 in a guard, is fixed and has its own test,
// CompileDynamic.SlicesWithFarBoundsOfSymbolicSizes); 130 s on 2 cores, so it stays out of CI's
// default run (CI time): run it with --gtest_also_run_disabled_tests.
TEST(InductorOpInfo, DISABLED_EverySampleCompiledWithSymbolicSizesMatchesEager) {
  const std::set<std::string> interpreted = sweep_forward(true);
  std::cout << interpreted.size() << " ops ran with the interpreter under symbolic sizes:";
  for (const std::string& name : interpreted) std::cout << " " << name;
  std::cout << "\n";
}

// Known differences, left for the inductor work (issue 7):
//   batch_norm: samples whose running statistics require grad: eager's native_batch_norm writes
//     them without autograd seeing it, aot refuses to write an input that requires grad and runs
//     the graph with the interpreter, which gives them no gradient;
//   index.Tensor, masked_select: boolean-mask indexing is a graph break (its output size depends
//     on the data); for some samples an input then gets no gradient through the compiled
//     function (under investigation: which sample fails depends on what ran before).
const std::set<std::string> kKnownBackwardDifferences = {"batch_norm", "index.Tensor",
                                                         "masked_select"};

// The same with gradients: the float tensors of each differentiable op's samples require grad, and
// the gradients of sum(output_i * w_i) (fixed random weights) through the compiled forward and
// backward graphs match eager's.
TEST(InductorOpInfo, EveryDifferentiableSampleCompiledGradientsMatchEager) {
  int compared = 0;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples || !op->differentiable ||
        op->is_random || !selected(*op) || kKnownBackwardDifferences.count(op->full_name())) {
      continue;
    }
    std::vector<Stack> samples;
    for (const ops::Sample& s : op->samples()) {
      if (!s.differentiable_point) continue;
      bool floating = false;
      for (const Tensor& t : sample_tensors(s.args)) {
        floating = floating || t.dtype() == DType::Float32 || t.dtype() == DType::Float64;
      }
      if (floating && eager_accepts(*op, s.args)) samples.push_back(s.args);
    }
    if (samples.empty()) continue;
    SCOPED_TRACE(op->full_name());
    auto run = [op, &samples](const std::vector<Tensor>& tensors) {
      return run_samples(*op, samples, tensors);
    };
    // Leaves: float32/float64 tensors require grad; ops writing an argument get copies.
    auto leaves_of = [&]() {
      std::vector<Tensor> in;
      for (const Stack& args : samples) {
        for (Tensor t : sample_tensors(args)) {
          if (t.dtype() == DType::Float32 || t.dtype() == DType::Float64) t.requires_grad_(true);
          in.push_back(t);
        }
      }
      return in;
    };
    const bool writes = std::any_of(op->schema.arguments.begin(), op->schema.arguments.end(),
                                    [](const ops::Argument& a) { return a.is_mutable; });
    if (writes) continue;  // a leaf that requires grad may not be written in place
    std::vector<Tensor> weights;
    auto loss_of = [&](const std::vector<Tensor>& outs) {
      Tensor total;
      size_t w = 0;
      for (const Tensor& o : outs) {
        if (!o.requires_grad()) continue;
        if (w == weights.size()) weights.push_back(randn(o.sizes(), o.dtype()));
        Tensor term = (o * weights[w++]).sum();
        total = total.defined() ? total + term : term;
      }
      return total;
    };
    std::vector<Tensor> eager_in = leaves_of();
    Tensor eager_loss = loss_of(run(eager_in));
    if (!eager_loss.defined()) continue;
    eager_loss.backward();
    std::vector<Tensor> compiled_in;
    for (const Tensor& t : eager_in) {
      Tensor c = t.detach().clone();
      if (t.requires_grad()) c.requires_grad_(true);
      compiled_in.push_back(c);
    }
    auto compiled = compile(run, {.backend = std::string("inductor")});
    try {
      Tensor loss = loss_of(compiled(compiled_in));
      loss.backward();
    } catch (const Error& e) {
      ADD_FAILURE() << "compiled: " << e.what();
      continue;
    }
    for (size_t i = 0; i < eager_in.size(); ++i) {
      if (!eager_in[i].requires_grad()) continue;
      const Tensor& want = eager_in[i].grad();
      const Tensor& got = compiled_in[i].grad();
      ASSERT_EQ(got.defined(), want.defined()) << "gradient " << i;
      if (want.defined()) {
        // Gradients go through decomposed backward formulas: ten times the op's absolute
        // tolerance (second derivatives of float32 ops near zero differ by ~1e-5).
        EXPECT_TRUE(same(got, want, *op, true, 10)) << "gradient " << i;
      }
    }
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace kiln
