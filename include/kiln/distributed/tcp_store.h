#pragma once
// TCPStore: a Store served over TCP. The rank created with is_server hosts it on a small server
// thread; every rank (the server's included) talks to it as a client. Port 0 on the server binds
// a free port, which port() reports.
#include <kiln/distributed/store.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

namespace kiln::distributed {

namespace detail {
class TCPStoreServer;
class TCPStoreConnection;
}  // namespace detail

struct TCPStoreOptions {
  std::string host = "127.0.0.1";
  int port = 29500;
  int world_size = 1;  // informational: how many ranks are expected to join
  bool is_server = false;
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
};

class TCPStore : public Store {
 public:
  explicit TCPStore(const TCPStoreOptions& options);
  TCPStore(std::string host, int port, int world_size, bool is_server,
           std::chrono::milliseconds timeout = std::chrono::seconds(300));
  ~TCPStore() override;
  TCPStore(const TCPStore&) = delete;
  TCPStore& operator=(const TCPStore&) = delete;

  using Store::set;
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::chrono::milliseconds timeout() const override { return options_.timeout; }

  // The port the server listens on (the one bound when options.port was 0).
  int port() const { return port_; }
  const std::string& host() const { return options_.host; }
  int world_size() const { return options_.world_size; }
  bool is_server() const { return server_ != nullptr; }

 private:
  // The connection, opened on first use and again after a timeout left it mid-reply.
  detail::TCPStoreConnection& connection(std::chrono::milliseconds timeout);
  std::vector<uint8_t> request(const std::vector<uint8_t>& message,
                               std::chrono::milliseconds timeout, const std::string& what);

  TCPStoreOptions options_;
  int port_ = 0;
  std::unique_ptr<detail::TCPStoreServer> server_;
  std::mutex mutex_;  // one request at a time on the connection
  std::unique_ptr<detail::TCPStoreConnection> connection_;
};

}  // namespace kiln::distributed
