#include "capture/dynamic_policy.h"

#include <kiln/capture/logs.h>
#include <kiln/capture/mark_dynamic.h>

#include <fmt/format.h>

namespace kiln::capture {

std::vector<DynamicDim> plan_dynamic_dims(const Leaves& args, std::optional<bool> dynamic,
                                          const AutomaticDynamicDims& automatic) {
  std::vector<DynamicDim> dims;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_tensor() || !args[i].to_tensor().defined()) continue;
    const Tensor& t = args[i].to_tensor();
    std::vector<DynamicDim> wanted;
    for (int64_t d = 0; d < t.dim(); ++d) {
      const std::optional<DimMark> mark = dim_mark(t, d);
      if (mark) {
        if (mark->dynamic) wanted.push_back(DynamicDim{i, d, mark->min, mark->max});
      } else if (dynamic == true || (!dynamic && automatic.contains({i, d}))) {
        wanted.push_back(DynamicDim{i, d});
      }
    }
    if (wanted.empty()) continue;
    if (!t.is_contiguous() || t.dim() > 64) {
      logs::log(logs::Channel::dynamic,
                fmt::format("arg {} stays static: dynamic dimensions need a contiguous tensor of "
                            "rank <= 64",
                            i));
      continue;
    }
    dims.insert(dims.end(), wanted.begin(), wanted.end());
  }
  return dims;
}

}  // namespace kiln::capture
