#pragma once
// Op-info sample sets shared by the binary op declarations.
#include "ops/samples.h"

#include <kiln/ops/creation.h>

#include <initializer_list>

namespace kiln::ops {

// Concatenates sample sets.
inline std::vector<Sample> concat(std::initializer_list<std::vector<Sample>> groups) {
  std::vector<Sample> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  return all;
}

// binary_samples plus a wrapped Python-like scalar operand and a mixed-dtype pair (promotion).
inline std::vector<Sample> promoting_samples(DType dtype, double low, double high,
                                             const Scalar& scalar, DType other_dtype,
                                             const Stack& extra = {}) {
  std::vector<Sample> s = binary_samples(dtype, low, high, extra);
  Stack w{make_sample({3, 4}, dtype, low, high, 21), wrapped_scalar(scalar)};
  Stack m{make_sample({3, 4}, dtype, low, high, 22), make_sample({4}, other_dtype, low, high, 23)};
  w.insert(w.end(), extra.begin(), extra.end());
  m.insert(m.end(), extra.begin(), extra.end());
  s.push_back({std::move(w), "wrapped scalar"});
  s.push_back({std::move(m), "mixed dtypes"});
  return s;
}

// Divisors away from zero: numerators in [-3, 3), divisors in [1, 4) and (-4, -1].
inline std::vector<Sample> division_samples(DType dtype, const Stack& extra = {}) {
  std::vector<Sample> s = binary_samples(dtype, 1.0, 4.0, extra);
  Stack neg{make_sample({4, 5}, dtype, -3.0, 3.0, 31), make_sample({4, 5}, dtype, -4.0, -1.0, 32)};
  Stack mixed{make_sample({6}, dtype, -3.0, 3.0, 33), make_sample({2, 1}, dtype, 1.0, 4.0, 34)};
  neg.insert(neg.end(), extra.begin(), extra.end());
  mixed.insert(mixed.end(), extra.begin(), extra.end());
  s.push_back({std::move(neg), "negative divisors"});
  s.push_back({std::move(mixed), "signed numerators, broadcast"});
  return s;
}

}  // namespace kiln::ops
