#pragma once
// OrderedDict: a map that keeps insertion order, like Python's dict (and torch.nn's OrderedDict of
// parameters, buffers and submodules). Lookup by key is O(1); iteration yields (key, value) pairs
// in the order the keys were first inserted.
#include <kiln/core/error.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::nn {

template <typename V>
class OrderedDict {
 public:
  using Item = std::pair<std::string, V>;

  OrderedDict() = default;
  OrderedDict(std::initializer_list<Item> items) {
    for (const Item& it : items) insert(it.first, it.second);
  }
  explicit OrderedDict(std::vector<Item> items) {
    for (Item& it : items) insert(std::move(it.first), std::move(it.second));
  }

  // Inserts key, or replaces its value in place (keeping its position) if it exists.
  V& insert(std::string key, V value) {
    auto found = index_.find(key);
    if (found != index_.end()) {
      items_[found->second].second = std::move(value);
      return items_[found->second].second;
    }
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  bool erase(const std::string& key) {
    auto found = index_.find(key);
    if (found == index_.end()) return false;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(found->second));
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
    return true;
  }

  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  // nullptr when absent.
  const V* find(const std::string& key) const {
    auto found = index_.find(key);
    return found == index_.end() ? nullptr : &items_[found->second].second;
  }
  V* find(const std::string& key) {
    auto found = index_.find(key);
    return found == index_.end() ? nullptr : &items_[found->second].second;
  }
  // Raises kiln::Error naming the key when absent.
  const V& at(const std::string& key) const {
    const V* v = find(key);
    KILN_CHECK(v != nullptr, "OrderedDict: no key \"{}\"", key);
    return *v;
  }
  V& at(const std::string& key) {
    V* v = find(key);
    KILN_CHECK(v != nullptr, "OrderedDict: no key \"{}\"", key);
    return *v;
  }
  const V& operator[](const std::string& key) const { return at(key); }
  V& operator[](const std::string& key) { return at(key); }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() {
    items_.clear();
    index_.clear();
  }

  const std::vector<Item>& items() const { return items_; }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    out.reserve(items_.size());
    for (const Item& it : items_) out.push_back(it.first);
    return out;
  }
  std::vector<V> values() const {
    std::vector<V> out;
    out.reserve(items_.size());
    for (const Item& it : items_) out.push_back(it.second);
    return out;
  }

  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace kiln::nn
