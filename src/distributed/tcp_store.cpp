#include <kiln/distributed/tcp_store.h>

#include <kiln/core/error.h>

#include "distributed/socket.h"
#include "distributed/tcp_store_protocol.h"
#include "distributed/tcp_store_server.h"

namespace kiln::distributed {

namespace detail {
class TCPStoreConnection {
 public:
  explicit TCPStoreConnection(Socket socket) : socket(std::move(socket)) {}
  Socket socket;
};
}  // namespace detail

using detail::Clock;
using detail::StoreCommand;
using detail::StoreRequest;

TCPStore::TCPStore(const TCPStoreOptions& options) : options_(options), port_(options.port) {
  KILN_CHECK(options.world_size >= 1, "TCPStore: world_size must be at least 1, got {}",
             options.world_size);
  KILN_CHECK(options.timeout.count() > 0, "TCPStore: timeout must be positive, got {} ms",
             options.timeout.count());
  if (options.is_server) {
    server_ = std::make_unique<detail::TCPStoreServer>(options.port);
    port_ = server_->port();
  } else {
    KILN_CHECK(options.port > 0 && options.port < 65536,
               "TCPStore: a client needs the server's port in [1, 65535], got {}", options.port);
  }
}

TCPStore::TCPStore(std::string host, int port, int world_size, bool is_server,
                   std::chrono::milliseconds timeout)
    : TCPStore(TCPStoreOptions{std::move(host), port, world_size, is_server, timeout}) {}

// The connection closes before the server stops, so that its thread sees a clean end of stream.
TCPStore::~TCPStore() {
  connection_.reset();
  server_.reset();
}

detail::TCPStoreConnection& TCPStore::connection(std::chrono::milliseconds timeout) {
  if (!connection_) {
    connection_ = std::make_unique<detail::TCPStoreConnection>(
        detail::connect_to(options_.host, port_, Clock::now() + timeout));
  }
  return *connection_;
}

std::vector<uint8_t> TCPStore::request(const std::vector<uint8_t>& message,
                                       std::chrono::milliseconds timeout, const std::string& what) {
  std::lock_guard lock(mutex_);
  auto deadline = Clock::now() + timeout;
  try {
    auto& socket = connection(timeout).socket;
    detail::send_all(socket, message);
    if (auto reply = detail::read_reply(socket, deadline)) return std::move(*reply);
  } catch (const Error& e) {
    connection_.reset();
    KILN_FAIL("{} failed (store {}:{}): {}", what, options_.host, port_, e.what());
  }
  // The reply may still come: this connection is mid-message, so the next request opens another.
  connection_.reset();
  KILN_FAIL("{} timed out after {} ms waiting on the store at {}:{}", what, timeout.count(),
            options_.host, port_);
}

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  request(detail::encode_request({StoreCommand::Set, {key}, value}), options_.timeout,
          fmt::format("TCPStore.set('{}')", key));
}

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  return request(detail::encode_request({StoreCommand::Get, {key}, {}}), options_.timeout,
                 fmt::format("TCPStore.get('{}')", key));
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  auto reply =
      request(detail::encode_request({StoreCommand::Add, {key}, detail::encode_i64(delta)}),
              options_.timeout, fmt::format("TCPStore.add('{}')", key));
  return detail::decode_i64(reply, "TCPStore.add");
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  auto reply = request(detail::encode_request({StoreCommand::Check, keys, {}}), options_.timeout,
                       fmt::format("TCPStore.check({})", keys));
  return reply.size() == 1 && reply[0] == 1;
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  KILN_CHECK(timeout.count() > 0, "TCPStore.wait: timeout must be positive, got {} ms",
             timeout.count());
  request(detail::encode_request({StoreCommand::Wait, keys, {}}), timeout,
          fmt::format("TCPStore.wait({})", keys));
}

}  // namespace kiln::distributed
