#pragma once
// The inductor's options, from compile()'s `options` map (documented in
// include/kiln/inductor/inductor.h): "fallback", "extern_epilogues", "freezing",
// "prepack_weights", "layout_optimization", "split_reductions" (reduction_splitting.h),
// "autotune_force" (autotune.h), "streaming_stores" (streaming_stores.h).
#include <kiln/backends/backend.h>

#include <string_view>

namespace kiln::inductor {

// Whether option `name` was given as `value`.
inline bool option_is(const BackendContext& context, const std::string& name,
                      std::string_view value) {
  auto it = context.options.find(name);
  return it != context.options.end() && it->second == value;
}

}  // namespace kiln::inductor
