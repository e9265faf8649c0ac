#pragma once
// Symbolic size expressions computed once per kernel call: a generated kernel's loop bounds and
// indices spell floor divisions of the symbols (a convolution's output size, ((s2 + 1)//2)) inline,
// and compilers keep an integer division that might trap inside the loops that use it (one per
// vector iteration of a batch norm's column sums). Each call of kiln_floordiv / kiln_floormod
// whose arguments read only symbols and constants becomes a named value (ks0, ks1, ...) declared
// once after the symbols.
#include <string>

namespace kiln::inductor {

// `body` (a kernel function's body text, symbols declared as `s<k> = sym[k];` lines) with those
// calls named and declared; unchanged when it reads no symbols.
std::string hoist_size_expressions(const std::string& body);

}  // namespace kiln::inductor
