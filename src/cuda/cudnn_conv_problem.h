#pragma once
// How a convolution pass is described to cuDNN, shared by its two APIs (cudnn_conv_pass.cpp's
// legacy one and cudnn_graph_conv.cpp's graph one): the dims (a 1-d convolution as a 2-d one over
// [N, C, 1, L]), the layout (NHWC where one of the tensors is channels-last) and the key of
// everything a plan depends on.
#include "cuda/cudnn_conv_pass.h"
#include "ops/conv/conv_params.h"

#include <kiln/core/tensor.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace kiln::cuda {

// A tensor's sizes as cuDNN takes them: 4-d or 5-d (a 1-d convolution gets a spatial dim of 1).
inline std::vector<int64_t> cudnn_dims(const Tensor& t) {
  std::vector<int64_t> dims(t.sizes().begin(), t.sizes().end());
  if (t.dim() == 3) dims.insert(dims.begin() + 2, 1);
  return dims;
}

// A 4-d tensor dense in channels-last order (NHWC) and not row-major.
inline bool is_nhwc(const Tensor& t) {
  return t.dim() == 4 && !t.is_contiguous() && t.is_contiguous(MemoryFormat::ChannelsLast);
}

// Whether a pass runs in NHWC: one of its tensors is (the caller makes all three dense in one
// layout; a tensor dense in both, such as one of a single channel, takes the pass's).
inline bool nhwc_pass(const Tensor& x, const Tensor& w, const Tensor& y) {
  return is_nhwc(x) || is_nhwc(w) || is_nhwc(y);
}

// The strides cuDNN is told for `dims`: channels-last ones in an NHWC pass, row-major otherwise.
inline std::vector<int64_t> cudnn_strides(const std::vector<int64_t>& dims, bool nhwc) {
  std::vector<int64_t> strides(dims.size(), 1);
  if (nhwc) {
    const int64_t c = dims[1], h = dims[2], w = dims[3];
    return {c * h * w, 1, w * c, c};
  }
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// Everything the descriptors and the choice of a kernel depend on.
using ConvProblemKey = std::vector<int64_t>;

inline ConvProblemKey conv_problem_key(ConvPass pass, const Tensor& x, const Tensor& w,
                                       const Tensor& y, const ops::conv::ConvParams& p, bool tf32,
                                       bool timed) {
  ConvProblemKey k{static_cast<int64_t>(pass),
                   static_cast<int64_t>(x.dtype()),
                   x.device().index(),
                   tf32,
                   timed,
                   x.dim(),
                   p.groups};
  k.push_back(nhwc_pass(x, w, y));
  for (const Tensor* t : {&x, &w, &y}) k.insert(k.end(), t->sizes().begin(), t->sizes().end());
  for (const std::vector<int64_t>* v : {&p.padding, &p.stride, &p.dilation}) {
    k.insert(k.end(), v->begin(), v->end());
  }
  return k;
}

// The plans chosen, by problem key, shared by the threads (each entry is what cuDNN chose for its
// key); a null plan records a problem the API has none for.
template <typename Plan>
class ConvPlanCache {
 public:
  // The entry for `key` (possibly a null plan), or nullopt when the key was never stored.
  std::optional<std::shared_ptr<const Plan>> find(const ConvProblemKey& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = plans_.find(key);
    if (it == plans_.end()) return std::nullopt;
    return it->second;
  }
  void store(ConvProblemKey key, std::shared_ptr<const Plan> plan) {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_[std::move(key)] = std::move(plan);
  }
  // Entries with a plan (`with_plan`) or without one.
  size_t count(bool with_plan = true) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<size_t>(std::count_if(plans_.begin(), plans_.end(), [&](const auto& e) {
      return (e.second != nullptr) == with_plan;
    }));
  }

 private:
  mutable std::mutex mutex_;
  std::map<ConvProblemKey, std::shared_ptr<const Plan>> plans_;
};

}  // namespace kiln::cuda
