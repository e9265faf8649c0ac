#include "distributed/tcp_store_server.h"

#include <kiln/core/error.h>

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

namespace kiln::distributed::detail {

TCPStoreServer::TCPStoreServer(int port) {
  std::tie(listener_, port_) = listen_on(port);
  KILN_CHECK(::pipe2(wake_pipe_, O_CLOEXEC) == 0, "TCPStore: cannot create a pipe: {}",
             std::strerror(errno));
  accept_thread_ = std::thread([this] { accept_loop(); });
}

TCPStoreServer::~TCPStoreServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  char byte = 1;
  [[maybe_unused]] auto written = ::write(wake_pipe_[1], &byte, 1);
  accept_thread_.join();
  // No client is added after the accept thread ended; shutting the sockets down ends their reads.
  for (auto& client : clients_) client->socket.shutdown();
  for (auto& client : clients_) client->thread.join();
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
}

void TCPStoreServer::accept_loop() {
  while (true) {
    Socket socket = accept_from(listener_, wake_pipe_[0]);
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    if (!socket.valid()) continue;
    auto client = std::make_unique<Client>();
    client->socket = std::move(socket);
    Client* raw = client.get();
    client->thread = std::thread([this, raw] { serve(raw->socket); });
    clients_.push_back(std::move(client));
  }
}

void TCPStoreServer::serve(const Socket& socket) {
  try {
    while (auto request = read_request(socket)) {
      auto reply = handle(*request);
      if (!reply) return;
      send_reply(socket, *reply);
    }
  } catch (const Error&) {
    // The client went away mid-reply (it timed out or died): drop the connection, keep serving
    // the others.
  }
}

bool TCPStoreServer::has_all(const std::vector<std::string>& keys) const {
  for (const auto& key : keys)
    if (!values_.contains(key)) return false;
  return true;
}

std::optional<std::vector<uint8_t>> TCPStoreServer::handle(const StoreRequest& request) {
  std::unique_lock lock(mutex_);
  auto wait_for_keys = [&] {
    changed_.wait(lock, [&] { return stopping_ || has_all(request.keys); });
    return !stopping_;
  };
  switch (request.command) {
    case StoreCommand::Set:
      if (request.keys.size() != 1) break;
      values_[request.keys[0]] = request.value;
      changed_.notify_all();
      return std::vector<uint8_t>{};
    case StoreCommand::Get:
      if (request.keys.size() != 1) break;
      if (!wait_for_keys()) return std::nullopt;
      return values_[request.keys[0]];
    case StoreCommand::Add: {
      if (request.keys.size() != 1) break;
      // Counters are stored as decimal text, so that get() of a counter reads naturally.
      int64_t current = 0;
      if (auto it = values_.find(request.keys[0]); it != values_.end()) {
        const char* begin = reinterpret_cast<const char*>(it->second.data());
        auto [end, error] = std::from_chars(begin, begin + it->second.size(), current);
        if (error != std::errc() || end != begin + it->second.size()) current = 0;
      }
      int64_t updated = current + decode_i64(request.value, "TCPStore.add");
      std::string text = std::to_string(updated);
      values_[request.keys[0]] = std::vector<uint8_t>(text.begin(), text.end());
      changed_.notify_all();
      return encode_i64(updated);
    }
    case StoreCommand::Check:
      return std::vector<uint8_t>{static_cast<uint8_t>(has_all(request.keys) ? 1 : 0)};
    case StoreCommand::Wait:
      if (!wait_for_keys()) return std::nullopt;
      return std::vector<uint8_t>{};
  }
  return std::nullopt;  // a malformed request: drop the client
}

}  // namespace kiln::distributed::detail
