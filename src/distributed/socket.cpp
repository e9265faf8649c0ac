#include "distributed/socket.h"
#include "core/errno_text.h"

#include <kiln/core/error.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace kiln::distributed::detail {

namespace {

int milliseconds_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

void set_no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Socket::shutdown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

namespace {

// The IPv6 wildcard, dual-stack so that IPv4 clients (127.0.0.1) reach it too; an invalid socket
// where the kernel has no IPv6.
Socket listen_dual_stack(int port) {
  Socket socket(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) return socket;
  int one = 1, zero = 0;
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  ::setsockopt(socket.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  address.sin6_port = htons(static_cast<uint16_t>(port));
  if (::bind(socket.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
    return Socket();
  return socket;
}

Socket listen_ipv4(int port) {
  Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  KILN_CHECK(socket.valid(), "TCPStore: cannot create a socket: {}", errno_text());
  int one = 1;
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  KILN_CHECK(::bind(socket.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0,
             "TCPStore: cannot bind port {}: {}", port, errno_text());
  return socket;
}

int bound_port(const Socket& socket) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  ::getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&address), &length);
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

}  // namespace

std::pair<Socket, int> listen_on(int port) {
  KILN_CHECK(port >= 0 && port < 65536, "TCPStore: port must be in [0, 65535], got {}", port);
  Socket socket = listen_dual_stack(port);
  if (!socket.valid()) socket = listen_ipv4(port);
  KILN_CHECK(::listen(socket.fd(), 128) == 0, "TCPStore: cannot listen on port {}: {}", port,
             errno_text());
  int bound = bound_port(socket);
  return {std::move(socket), bound};
}

Socket connect_to(const std::string& host, int port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string service = std::to_string(port);
  std::string last_error = "no address";
  auto pause = std::chrono::milliseconds(5);
  do {
    addrinfo* found = nullptr;
    int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
    if (rc != 0) {
      last_error = ::gai_strerror(rc);
    } else {
      for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
        Socket socket(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (!socket.valid()) continue;
        if (::connect(socket.fd(), a->ai_addr, a->ai_addrlen) == 0) {
          ::freeaddrinfo(found);
          set_no_delay(socket.fd());
          return socket;
        }
        last_error = errno_text();
      }
      ::freeaddrinfo(found);
    }
    // The server may not be up yet: try again, backing off a little.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  } while (Clock::now() < deadline);
  KILN_FAIL("TCPStore: cannot connect to {}:{} before the timeout passed (last error: {})", host,
            port, last_error);
}

Socket accept_from(const Socket& listener, int wake_fd) {
  pollfd fds[2] = {{listener.fd(), POLLIN, 0}, {wake_fd, POLLIN, 0}};
  while (true) {
    int rc = ::poll(fds, 2, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || (fds[1].revents & POLLIN)) return Socket();
    if (fds[0].revents & POLLIN) {
      Socket socket(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
      if (socket.valid()) set_no_delay(socket.fd());
      return socket;
    }
  }
}

void send_all(const Socket& socket, std::span<const uint8_t> bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(socket.fd(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    KILN_CHECK(n > 0, "TCPStore: sending {} bytes failed: {}", bytes.size(), errno_text());
    sent += static_cast<size_t>(n);
  }
}

bool recv_all(const Socket& socket, std::span<uint8_t> bytes, Clock::time_point deadline) {
  size_t received = 0;
  while (received < bytes.size()) {
    pollfd fd{socket.fd(), POLLIN, 0};
    int rc = ::poll(&fd, 1, milliseconds_until(deadline));
    if (rc < 0 && errno == EINTR) continue;
    KILN_CHECK(rc >= 0, "TCPStore: waiting for a reply failed: {}", errno_text());
    if (rc == 0) return false;
    ssize_t n = ::recv(socket.fd(), bytes.data() + received, bytes.size() - received, 0);
    if (n < 0 && errno == EINTR) continue;
    KILN_CHECK(n > 0, "TCPStore: the server closed the connection (is rank 0 still running?)");
    received += static_cast<size_t>(n);
  }
  return true;
}

bool recv_all_or_closed(const Socket& socket, std::span<uint8_t> bytes) {
  size_t received = 0;
  while (received < bytes.size()) {
    ssize_t n = ::recv(socket.fd(), bytes.data() + received, bytes.size() - received, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    received += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace kiln::distributed::detail
