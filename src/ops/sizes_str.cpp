#include "ops/sizes_str.h"

#include <fmt/format.h>

namespace kiln::ops {

std::string sizes_str(IntList sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

std::string sizes_str(SymIntList sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + sizes[i].str();
  return out + "]";
}

}  // namespace kiln::ops
