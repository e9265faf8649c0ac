#pragma once
// Edits of a program that keep its value numbering consistent (the shrinker's moves; the
// generator drops inputs it made but did not use).
#include "fuzz/program.h"

namespace kiln::fuzz {

// Drops nodes whose values reach no output, then inputs nothing reads; renumbers values.
Program without_dead_code(const Program& program);
// Replaces every read of value `from` (by nodes and outputs) with `to` (an earlier value) and
// drops what became dead.
Program with_uses_replaced(const Program& program, int from, int to);

}  // namespace kiln::fuzz
