// Generated C++ and its split into translation units (see kernel_source.h).
#include "inductor/kernel_source.h"

#include <algorithm>
#include <numeric>

namespace kiln::inductor {

std::string KernelSource::joined() const {
  size_t size = prelude.size();
  for (const std::string& function : functions) size += function.size();
  std::string text;
  text.reserve(size);
  text += prelude;
  for (const std::string& function : functions) text += function;
  return text;
}

size_t part_count(size_t functions, size_t threads, size_t min_functions_per_part) {
  const size_t by_size = functions / std::max<size_t>(min_functions_per_part, 1);
  return std::max<size_t>(std::min(by_size, threads), 1);
}

std::vector<std::string> split_into_parts(const KernelSource& source, size_t parts,
                                          std::vector<size_t>* functions_per_part) {
  parts = std::clamp<size_t>(parts, 1, std::max<size_t>(source.functions.size(), 1));
  // Longest first (ties by position, so the grouping is deterministic).
  std::vector<size_t> by_length(source.functions.size());
  std::iota(by_length.begin(), by_length.end(), 0);
  std::stable_sort(by_length.begin(), by_length.end(), [&](size_t a, size_t b) {
    return source.functions[a].size() > source.functions[b].size();
  });
  std::vector<size_t> part_length(parts, 0);
  std::vector<size_t> part_of(source.functions.size());
  for (size_t function : by_length) {
    const size_t shortest = static_cast<size_t>(
        std::min_element(part_length.begin(), part_length.end()) - part_length.begin());
    part_of[function] = shortest;
    part_length[shortest] += source.functions[function].size();
  }
  std::vector<std::string> texts(parts, source.prelude);
  if (functions_per_part != nullptr) functions_per_part->assign(parts, 0);
  for (size_t function = 0; function < source.functions.size(); ++function) {
    texts[part_of[function]] += source.functions[function];
    if (functions_per_part != nullptr) ++(*functions_per_part)[part_of[function]];
  }
  return texts;
}

}  // namespace kiln::inductor
