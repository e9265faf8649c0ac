// Every op-info sample through the inductor against eager: for each op, one compiled function
// runs all its samples that eager accepts (one graph of prims, generated kernels and extern
// calls), forward, under the same seed for random ops; values within the op's sample tolerance
// (float32 at most 1e-5 relative unless the op's declaration says otherwise), exact for integer
// and bool results; arguments an op writes compare too.
#include "test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace kiln {
namespace {

using ops::IValue;
using ops::OpDef;
using ops::OpRegistry;
using ops::Stack;

// KILN_INDUCTOR_OPS=a,b restricts the sweep to those ops (full names).
bool selected(const OpDef& op) {
  const char* env = std::getenv("KILN_INDUCTOR_OPS");
  if (env == nullptr || *env == '\0') return true;
  std::stringstream list(env);
  for (std::string name; std::getline(list, name, ',');) {
    if (name == op.full_name()) return true;
  }
  return false;
}

// Ops whose outputs are uninitialized memory: only metadata compares.
const std::set<std::string> kUninitialized = {"empty", "empty_like", "empty_strided"};

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

::testing::AssertionResult same(const Tensor& got, const Tensor& want, const OpDef& op,
                                bool values) {
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
  const double atol = half ? 1e-2 : std::max(1e-6, op.sample_atol);
  return testing::all_close(got.to(kFloat64), want.to(kFloat64), rtol, atol);
}

TEST(InductorOpInfo, EverySampleCompiledMatchesEager) {
  autograd::NoGradGuard no_grad;
  int compared = 0;
  for (const OpDef* op : OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples || !selected(*op)) continue;
    // The samples eager accepts.
    std::vector<Stack> samples;
    for (const ops::Sample& s : op->samples()) {
      try {
        manual_seed(5);
        Stack args = s.args;
        size_t pos = 0;
        const std::vector<Tensor> fresh = sample_tensors(args);
        ops::call(*op, with_tensors(args, fresh, pos));
        samples.push_back(s.args);
      } catch (const Error&) {
      }
    }
    if (samples.empty()) continue;
    SCOPED_TRACE(op->full_name());
    auto run = [op, &samples](const std::vector<Tensor>& tensors) {
      std::vector<Tensor> outs;
      size_t pos = 0;
      for (const Stack& args : samples) {
        for (const Tensor& t : ops::call(*op, with_tensors(args, tensors, pos))) {
          if (t.defined()) outs.push_back(t);
        }
      }
      return outs;
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
    auto compiled = compile(run, {.backend = std::string("inductor")});
    std::vector<Tensor> got;
    try {
      manual_seed(5);
      got = compiled(compiled_in);
    } catch (const Error& e) {
      ADD_FAILURE() << "compiled: " << e.what();
      continue;
    }
    const bool values = !kUninitialized.count(op->full_name());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(same(got[i], want[i], *op, values)) << "output " << i;
    }
    for (size_t i = 0; i < eager_in.size(); ++i) {
      EXPECT_TRUE(same(compiled_in[i], eager_in[i], *op, values)) << "argument tensor " << i;
    }
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace kiln
