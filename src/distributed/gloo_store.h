#pragma once
// GlooStore: a kiln Store seen through Gloo's rendezvous interface, under a key prefix so that
// several process groups can meet through one store.
#include <kiln/distributed/store.h>

#include <gloo/rendezvous/store.h>

#include <memory>
#include <string>

namespace kiln::distributed::detail {

class GlooStore : public gloo::rendezvous::Store {
 public:
  GlooStore(std::shared_ptr<distributed::Store> store, std::string prefix)
      : store_(std::move(store)), prefix_(std::move(prefix)) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;

  std::shared_ptr<distributed::Store> store_;
  std::string prefix_;
};

}  // namespace kiln::distributed::detail
