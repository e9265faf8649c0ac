#pragma once
// A TCP socket as a move-only value, and the blocking helpers the TCPStore is built from. Every
// blocking call takes a deadline so that a missing peer ends in a kiln::Error, never a hang.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>

namespace kiln::distributed::detail {

using Clock = std::chrono::steady_clock;

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void close();
  // Wakes a thread blocked in recv on this socket (it then reads end of stream).
  void shutdown() const;

 private:
  int fd_ = -1;
};

// Listens on every interface; port 0 picks a free one. Returns the socket and the bound port.
std::pair<Socket, int> listen_on(int port);
// Connects to host:port, retrying while the server is not up yet, until deadline.
Socket connect_to(const std::string& host, int port, Clock::time_point deadline);
// Waits for a connection on a listening socket, or for wake_fd to become readable (then returns
// an invalid socket).
Socket accept_from(const Socket& listener, int wake_fd);

void send_all(const Socket& socket, std::span<const uint8_t> bytes);
// Fills bytes. Returns false when the deadline passes first (a partial read then leaves the stream
// mid-message: the caller must drop the socket). Raises kiln::Error when the peer closed.
bool recv_all(const Socket& socket, std::span<uint8_t> bytes, Clock::time_point deadline);
// As recv_all without a deadline; returns false when the peer closed the stream.
bool recv_all_or_closed(const Socket& socket, std::span<uint8_t> bytes);

}  // namespace kiln::distributed::detail
