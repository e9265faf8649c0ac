#pragma once
// Delta debugging over programs: given a program that fails and a predicate that says whether a
// variant still fails the same way, returns a smaller variant that does (a local minimum: no
// single move below keeps the failure).
#include "fuzz/program.h"

#include <functional>

namespace kiln::fuzz {

// True when the variant is valid in eager and still fails as the original did.
using StillFails = std::function<bool(const Program&)>;

struct ShrinkResult {
  Program program;
  int attempts = 0;  // predicate calls
  int accepted = 0;  // moves kept
};

// Moves, repeated until none is kept or `max_attempts` predicate calls are spent: drop an output;
// replace a node's value by one of its arguments or an earlier value of the same sizes and dtype
// (dropping what becomes dead); stop an input requiring grad; shrink an input dim to 1, to half,
// or to 0 (nodes' size arguments are kept: variants eager rejects fail the predicate).
ShrinkResult shrink(const Program& failing, const StillFails& still_fails, int max_attempts = 400);

}  // namespace kiln::fuzz
