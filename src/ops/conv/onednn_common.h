#pragma once
// What the oneDNN forward and backward convolutions share: the engine and per-thread stream, the
// weight descriptor that reads PyTorch's layouts in place, the layout decision, reorders, aligned
// per-thread scratch buffers and the bounded LRU cache of built primitives.
#include "ops/conv/conv_params.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ops::conv::onednn {

using dnnl::memory;
using Dims = memory::dims;

dnnl::engine& engine();
dnnl::stream& stream();

inline Dims dims_of(IntList v) { return Dims(v.begin(), v.end()); }

// Dense strides of `t` in the format it is dense in (its own strides may be arbitrary on size-1
// dims, which oneDNN's layout matching would not accept).
DimVector canonical_strides(const Tensor& t);

// The weight as oneDNN indexes it: {OC, IC, k...} or {G, OC/G, IC/G, k...} for groups > 1, read
// in place from PyTorch's [OC, IC/G, k...] (forward) or [IC, OC/G, k...] (transposed) layouts.
memory::desc user_weights_md(const Tensor& w, const ConvParams& p);

// A plain f32 descriptor of `sizes` laid out in `fmt`.
memory::desc plain_md(IntList sizes, MemoryFormat fmt);

// Whether NCHW activations should go through oneDNN's blocked layouts (its direct kernels) rather
// than be read in place; channels-last activations are always read in place.
bool worth_blocking(const Tensor& weight);

std::optional<dnnl::reorder> reorder_if_needed(const memory::desc& from, const memory::desc& to);

// The geometry's cache key (sizes, strides of the weight, parameters, layout, thread count; oneDNN
// sizes its work split when it builds a primitive) prefixed by `kind`.
std::string plan_key(char kind, const Tensor& out, const Tensor& input, const Tensor& weight,
                     bool has_bias, const ConvParams& p, MemoryFormat fmt);

// A 64-byte aligned region of at least `bytes` in buf, grown as needed.
void* sized(std::vector<std::byte>& buf, size_t bytes);

// Least-recently-used map from a geometry's key to its plan; thread-safe, bounded.
template <typename Plan>
class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : capacity_(capacity) {}
  std::shared_ptr<const Plan> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  void insert(const std::string& key, std::shared_ptr<const Plan> plan) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.emplace_front(key, std::move(plan));
    index_[key] = order_.begin();
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }
  size_t size() {
    std::lock_guard lock(mutex_);
    return order_.size();
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Plan>>;
  size_t capacity_;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
};

}  // namespace kiln::ops::conv::onednn
