// Sizes as the ops' error messages print them: "[2, 3]" (PyTorch's IntArrayRef formatting).
#pragma once

#include <string>

#include <kiln/core/array_ref.h>
#include <kiln/core/symint.h>

namespace kiln::ops {

std::string sizes_str(IntList sizes);
std::string sizes_str(SymIntList sizes);

}  // namespace kiln::ops
