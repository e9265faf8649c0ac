#pragma once
// What every checked-in fuzz reproducer calls: registry ops by name, and the comparison with
// eager. kiln_fuzz writes both into each standalone reproducer (tools/fuzz/reproducer.cpp; the
// checked-in fuzz_example_chain.cpp is its output verbatim); the regression tests share them here.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kiln::fuzz_reproducer {

// One registry op call, as the fuzzer made it.
inline kiln::Tensor call(const char* op, kiln::ops::Stack args, size_t output = 0) {
  return kiln::ops::call(kiln::ops::OpRegistry::instance().get(op), std::move(args)).at(output);
}

// Within 1e-4 relative of eager, plus 1e-4 of the result's largest magnitude; exact for integer
// and bool results; NaN where eager has NaN.
inline void expect_close(const kiln::Tensor& got, const kiln::Tensor& want,
                         const std::string& what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!want.defined()) return;
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> g = got.detach().to(kiln::DType::Float64).contiguous().tolist<double>();
  const std::vector<double> w =
      want.detach().to(kiln::DType::Float64).contiguous().tolist<double>();
  double scale = 1;
  for (double x : w) {
    if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
  }
  const bool exact = !kiln::is_floating_point(want.dtype());
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " element " << i << ": " << g[i] << " vs NaN";
    } else if (exact || !std::isfinite(w[i])) {
      EXPECT_EQ(g[i], w[i]) << what << " element " << i;
    } else {
      EXPECT_NEAR(g[i], w[i], 1e-4 * std::abs(w[i]) + 1e-4 * scale) << what << " element " << i;
    }
  }
}

using Program = std::vector<kiln::Tensor> (*)(const std::vector<kiln::Tensor>&);
using Inputs = std::vector<kiln::Tensor> (*)();
using Loss = kiln::Tensor (*)(const std::vector<kiln::Tensor>&);

// The reproducer's test body: outputs, inputs after the call and the gradients of `loss` compiled
// with `options`, each against eager on the same inputs.
inline void expect_compiled_matches_eager(Program program, Inputs inputs, Loss loss_of,
                                          const kiln::CompileOptions& options) {
  auto compiled = kiln::compile(
      [program](const std::vector<kiln::Tensor>& in) { return program(in); }, options);
  std::vector<kiln::Tensor> eager_in = inputs(), compiled_in = inputs();
  const std::vector<kiln::Tensor> want = program(eager_in);
  const std::vector<kiln::Tensor> got = compiled(compiled_in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    expect_close(got[i], want[i], "output " + std::to_string(i));
  }
  for (size_t i = 0; i < eager_in.size(); ++i) {
    expect_close(compiled_in[i].detach(), eager_in[i].detach(),
                 "input " + std::to_string(i) + " after the call");
  }
  const kiln::Tensor want_loss = loss_of(want), got_loss = loss_of(got);
  ASSERT_EQ(got_loss.defined(), want_loss.defined());
  if (!want_loss.defined()) return;
  want_loss.backward();
  got_loss.backward();
  for (size_t i = 0; i < eager_in.size(); ++i) {
    if (!eager_in[i].requires_grad()) continue;
    expect_close(compiled_in[i].grad(), eager_in[i].grad(),
                 "gradient of input " + std::to_string(i));
  }
}

}  // namespace kiln::fuzz_reproducer
