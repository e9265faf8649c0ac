#pragma once
// Generated C++ as the code generator writes it: a prelude (includes, helpers, the vector type;
// everything with internal linkage, so it may be repeated in several translation units) and one
// extern "C" function per kernel. The code cache compiles it as one translation unit or splits
// the kernels into several units compiled in parallel and linked together.
#include <cstddef>
#include <string>
#include <vector>

namespace kiln::inductor {

struct KernelSource {
  std::string prelude;
  // Each kernel's full text (with the blank line before it), in the order they are written.
  std::vector<std::string> functions;

  // The whole translation unit: the prelude followed by every function.
  std::string joined() const;
};

// How many translation units to compile `functions` kernels in: one per `min_functions_per_part`
// kernels, at most `threads`, at least one.
size_t part_count(size_t functions, size_t threads, size_t min_functions_per_part);

// `parts` translation units (at most one per function, at least one), each the prelude followed by
// a group of the functions in their original order. The groups have balanced text lengths: each
// function, longest first, goes to the group that is shortest so far. The result depends only on
// `source` and `parts`.
// `functions_per_part`, when given, receives how many functions each part holds.
std::vector<std::string> split_into_parts(const KernelSource& source, size_t parts,
                                          std::vector<size_t>* functions_per_part = nullptr);

}  // namespace kiln::inductor
