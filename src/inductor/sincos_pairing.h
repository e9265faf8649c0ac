#pragma once
// sin(x) and cos(x) of one vector computed together: SLEEF's sincos shares the range reduction,
// the costly part of both (the pointwise workload, rotary position embeddings).
#include <string>

namespace kiln::inductor {

// Rewrites a vector body (one statement a line, as VectorBodyWriter writes them): where
//   const VecF vA = vec_sin(vX);  ...  const VecF vB = vec_cos(vX);
// both occur (either order), the first becomes `VecF vA, vB; vec_sincos(vX, vA, vB);` and the
// second goes. Both names are then defined where the first was, after vX, before any use.
std::string pair_sin_cos(const std::string& lines);

}  // namespace kiln::inductor
