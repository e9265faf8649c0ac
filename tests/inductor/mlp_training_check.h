#pragma once
// Three SGD steps of a small mlp, compiled with `options` and eagerly from the same weights: the
// losses and every parameter agree after each step, and no graph ran with the interpreter.
#include "capture/capture_test_util.h"
#include "test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <string>

namespace kiln::testing {

inline void expect_mlp_training_matches_eager(const CompileOptions& options,
                                              const std::string& label = "") {
  LogCapture logs("perf_hints");
  manual_seed(6);
  auto eager = models::mlp({.in_features = 16, .hidden_features = {32}, .out_features = 8});
  manual_seed(6);
  auto model = models::mlp({.in_features = 16, .hidden_features = {32}, .out_features = 8});
  auto compiled = compile(model, options);
  optim::SGD eager_opt(eager->parameters(), {.lr = 0.05, .momentum = 0.9});
  optim::SGD opt(compiled->parameters(), {.lr = 0.05, .momentum = 0.9});
  manual_seed(7);
  const Tensor x = randn({8, 16});
  for (int step = 0; step < 3; ++step) {
    eager_opt.zero_grad();
    Tensor el = eager->forward(x).square().mean();
    el.backward();
    eager_opt.step();
    opt.zero_grad();
    Tensor l = (*compiled)(x).square().mean();
    l.backward();
    opt.step();
    EXPECT_TRUE(all_close(l, el, 1e-5, 1e-7)) << label << " step " << step;
    const auto p = model->parameters(), q = eager->parameters();
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(all_close(p[i], q[i], 1e-5, 1e-7)) << label << " step " << step << " param " << i;
    }
  }
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

}  // namespace kiln::testing
