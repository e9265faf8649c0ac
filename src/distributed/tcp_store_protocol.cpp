#include "distributed/tcp_store_protocol.h"

#include <kiln/core/error.h>

#include <cstring>

namespace kiln::distributed::detail {

namespace {

// Guards against a stray client (a port scanner, another program) making the server allocate
// without bound.
constexpr uint64_t kMaxFieldBytes = uint64_t{1} << 30;
constexpr uint32_t kMaxKeys = 1u << 20;

// resize + memcpy rather than insert: GCC 12 reports a false -Wstringop-overflow on the latter.
template <typename T>
void append(std::vector<uint8_t>& out, T value) {
  size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void append_bytes(std::vector<uint8_t>& out, const void* bytes, size_t size) {
  if (size == 0) return;
  size_t at = out.size();
  out.resize(at + size);
  std::memcpy(out.data() + at, bytes, size);
}

template <typename T>
std::optional<T> read_scalar(const Socket& socket) {
  uint8_t bytes[sizeof(T)];
  if (!recv_all_or_closed(socket, bytes)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

}  // namespace

std::vector<uint8_t> encode_request(const StoreRequest& request) {
  std::vector<uint8_t> out;
  append(out, static_cast<uint32_t>(request.command));
  append(out, static_cast<uint32_t>(request.keys.size()));
  for (const auto& key : request.keys) {
    append(out, static_cast<uint32_t>(key.size()));
    append_bytes(out, key.data(), key.size());
  }
  append(out, static_cast<uint64_t>(request.value.size()));
  append_bytes(out, request.value.data(), request.value.size());
  return out;
}

std::optional<StoreRequest> read_request(const Socket& socket) {
  StoreRequest request;
  auto command = read_scalar<uint32_t>(socket);
  auto count = command ? read_scalar<uint32_t>(socket) : std::nullopt;
  if (!count || *count > kMaxKeys) return std::nullopt;
  request.command = static_cast<StoreCommand>(*command);
  for (uint32_t i = 0; i < *count; ++i) {
    auto length = read_scalar<uint32_t>(socket);
    if (!length || *length > kMaxFieldBytes) return std::nullopt;
    std::string key(*length, '\0');
    if (!recv_all_or_closed(socket, std::span(reinterpret_cast<uint8_t*>(key.data()), key.size())))
      return std::nullopt;
    request.keys.push_back(std::move(key));
  }
  auto length = read_scalar<uint64_t>(socket);
  if (!length || *length > kMaxFieldBytes) return std::nullopt;
  request.value.resize(*length);
  if (!recv_all_or_closed(socket, request.value)) return std::nullopt;
  return request;
}

void send_reply(const Socket& socket, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out;
  out.reserve(sizeof(uint64_t) + payload.size());
  append(out, static_cast<uint64_t>(payload.size()));
  append_bytes(out, payload.data(), payload.size());
  send_all(socket, out);
}

std::optional<std::vector<uint8_t>> read_reply(const Socket& socket, Clock::time_point deadline) {
  uint8_t header[sizeof(uint64_t)];
  if (!recv_all(socket, header, deadline)) return std::nullopt;
  uint64_t length;
  std::memcpy(&length, header, sizeof(length));
  KILN_CHECK(length <= kMaxFieldBytes, "TCPStore: malformed reply of {} bytes", length);
  std::vector<uint8_t> payload(length);
  if (!recv_all(socket, payload, deadline)) return std::nullopt;
  return payload;
}

std::vector<uint8_t> encode_i64(int64_t value) {
  std::vector<uint8_t> out;
  append(out, value);
  return out;
}

int64_t decode_i64(const std::vector<uint8_t>& bytes, const char* who) {
  KILN_CHECK(bytes.size() == sizeof(int64_t), "{}: expected an 8-byte integer, got {} bytes", who,
             bytes.size());
  int64_t value;
  std::memcpy(&value, bytes.data(), sizeof(value));
  return value;
}

}  // namespace kiln::distributed::detail
