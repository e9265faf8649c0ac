#pragma once
// The TCPStore's server: a thread that accepts clients and a thread per client (a job has few
// ranks). Requests that wait for keys park on a condition variable until a set or add makes them
// exist; the client, not the server, owns the timeout.
#include "distributed/socket.h"
#include "distributed/tcp_store_protocol.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::distributed::detail {

class TCPStoreServer {
 public:
  explicit TCPStoreServer(int port);  // 0 picks a free port
  ~TCPStoreServer();                  // wakes and joins every thread
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  int port() const { return port_; }

 private:
  struct Client {
    Socket socket;
    std::thread thread;
  };

  void accept_loop();
  void serve(const Socket& socket);
  // Returns the reply, or nullopt when the server stopped while the request waited.
  std::optional<std::vector<uint8_t>> handle(const StoreRequest& request);
  bool has_all(const std::vector<std::string>& keys) const;  // mutex_ held

  Socket listener_;
  int port_ = 0;
  int wake_pipe_[2] = {-1, -1};
  std::thread accept_thread_;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::map<std::string, std::vector<uint8_t>> values_;
  std::vector<std::unique_ptr<Client>> clients_;
};

}  // namespace kiln::distributed::detail
