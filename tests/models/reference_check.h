#pragma once
// Helpers for checking a kiln model against exported reference data (reference_data.h).
#include "models/reference_data.h"
#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kiln::models_testing {

#define KILN_REQUIRE_REFERENCE(data)                                                 \
  if ((data).empty())                                                                \
  GTEST_SKIP() << "no reference data in " << ::kiln::models_testing::reference_dir() \
               << ": run tests/models/export_reference.py <dir> (the CTest fixture " \
                  "models_reference_export does)"

// Float32 results against float32 references: relative 1e-4, with an absolute floor of 1e-5 of
// the reference's largest magnitude for elements that cancel to near zero.
inline ::testing::AssertionResult matches_reference(const Tensor& actual, const Tensor& expected) {
  double scale = 0;
  for (double v : testing::values(expected)) scale = std::max(scale, std::abs(v));
  return testing::all_close(actual.to(DType::Float32), expected, 1e-4, 1e-5 * scale + 1e-7);
}

// The scalar loss sum(output * R) with R the exported "weight.<name>".
inline Tensor weighted_sum(const ReferenceData& data, const std::string& name, const Tensor& out) {
  return (out * data["weight." + name]).sum();
}

// Every exported "grad.<name>" against the model's parameter gradient under that name.
inline void expect_gradients_match(const ReferenceData& data, nn::Module& model) {
  auto params = model.named_parameters();
  auto grads = data.with_prefix("grad");
  ASSERT_FALSE(grads.empty());
  for (const auto& [name, expected] : grads.items()) {
    const Tensor* p = params.find(name);
    ASSERT_NE(p, nullptr) << "no parameter " << name;
    ASSERT_TRUE(p->grad().defined()) << "no gradient reached " << name;
    EXPECT_TRUE(matches_reference(p->grad(), expected)) << "gradient of " << name;
  }
}

}  // namespace kiln::models_testing
