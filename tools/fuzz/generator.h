#pragma once
// Random valid programs: a seed gives one program, always the same.
#include "fuzz/builder.h"
#include "fuzz/program.h"

#include <cstdint>

namespace kiln::fuzz {

// 1 to options.max_ops nodes drawn from the op families (fuzz/rules) over 1 to 3 starting inputs
// (more are added as ops need operands); the outputs are every value nothing reads plus a few
// random others. Raises kiln::Error if a rule made a node that eager rejects.
Program generate(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace kiln::fuzz
