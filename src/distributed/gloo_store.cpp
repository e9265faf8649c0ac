#include "distributed/gloo_store.h"

namespace kiln::distributed::detail {

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  store_->set(prefix_ + key, std::vector<uint8_t>(data.begin(), data.end()));
}

std::vector<char> GlooStore::get(const std::string& key) {
  auto bytes = store_->get(prefix_ + key);
  return std::vector<char>(bytes.begin(), bytes.end());
}

void GlooStore::wait(const std::vector<std::string>& keys) { store_->wait(prefixed(keys)); }

void GlooStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  store_->wait(prefixed(keys), timeout);
}

std::vector<std::string> GlooStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& key : keys) out.push_back(prefix_ + key);
  return out;
}

}  // namespace kiln::distributed::detail
