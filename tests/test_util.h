#pragma once
// Shared test helpers: comparing tensors with tolerances and building float64 references.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <cmath>
#include <string>
#include <vector>

namespace kiln {
// Lets GoogleTest print sizes and strides readably in failure messages.
template <typename T>
void PrintTo(const ArrayRef<T>& a, std::ostream* os) {
  *os << "[" << fmt::format("{}", fmt::join(a, ", ")) << "]";
}
}  // namespace kiln

namespace kiln::testing {

// The values of t in row-major order, as doubles.
inline std::vector<double> values(const Tensor& t) { return t.tolist<double>(); }

// Expects equal shapes and |a - b| <= atol + rtol * |b| elementwise (NaNs must match, infinities
// must be equal).
inline ::testing::AssertionResult all_close(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                                            double atol = 1e-8) {
  if (IntList(a.sizes()) != IntList(b.sizes())) {
    return ::testing::AssertionFailure()
           << "shape [" << fmt::format("{}", fmt::join(a.sizes(), ", ")) << "] vs ["
           << fmt::format("{}", fmt::join(b.sizes(), ", ")) << "]";
  }
  auto va = values(a), vb = values(b);
  for (size_t i = 0; i < va.size(); ++i) {
    double x = va[i], y = vb[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) && std::isnan(y)) continue;
      return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs " << y;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x == y) continue;
      return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs " << y;
    }
    if (std::abs(x - y) > atol + rtol * std::abs(y)) {
      return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs " << y
                                           << " (rtol " << rtol << ", atol " << atol << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Expects `f` to throw kiln::Error whose message contains every one of `parts`.
template <typename F>
::testing::AssertionResult throws_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const auto& p : parts) {
      if (msg.find(p) == std::string::npos) {
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << p << "\"";
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-kiln exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace kiln::testing
