#pragma once
// What every oneDNN-backed kernel shares: the CPU engine, a stream per thread, aligned scratch
// buffers and the bounded LRU cache type for built primitives (building one costs microseconds to
// milliseconds, more than running a small one).
#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ops::onednn {

dnnl::engine& engine();
dnnl::stream& stream();

// A 64-byte aligned region of at least `bytes` in buf, grown as needed (per-thread scratch: a
// primitive built with a user scratchpad may then run on several threads at once).
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

}  // namespace kiln::ops::onednn
