#pragma once
// Store: the key-value store that the ranks of a job meet through before they can talk directly
// (rendezvous). Values are bytes; get and wait block until their keys exist or the store's
// timeout passes, then raise kiln::Error naming the keys and the timeout.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::distributed {

class Store {
 public:
  virtual ~Store() = default;

  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  // Blocks until key exists (or the timeout passes).
  virtual std::vector<uint8_t> get(const std::string& key) = 0;
  // Adds delta to the integer stored at key (0 when absent) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // True when every key exists; never blocks.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Blocks until every key exists; timeout defaults to the store's own.
  virtual void wait(const std::vector<std::string>& keys) { wait(keys, timeout()); }
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  virtual std::chrono::milliseconds timeout() const = 0;

  void set(const std::string& key, const std::string& value) {
    set(key, std::vector<uint8_t>(value.begin(), value.end()));
  }
  std::string get_string(const std::string& key) {
    auto bytes = get(key);
    return std::string(bytes.begin(), bytes.end());
  }
};

}  // namespace kiln::distributed
