#pragma once
// The TCPStore's wire format. A request is
//   u32 command, u32 key count, per key (u32 length, bytes), u64 value length, value bytes
// and a reply is u64 length, bytes. Integers are little-endian (kiln runs on x86-64 and AArch64).
#include "distributed/socket.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::distributed::detail {

enum class StoreCommand : uint32_t {
  Set = 1,    // keys[0] = value; empty reply
  Get = 2,    // reply: the value of keys[0], once it exists
  Add = 3,    // value: an i64 delta; reply: the new i64
  Check = 4,  // reply: one byte, 1 when every key exists
  Wait = 5,   // empty reply once every key exists
};

struct StoreRequest {
  StoreCommand command = StoreCommand::Set;
  std::vector<std::string> keys;
  std::vector<uint8_t> value;
};

std::vector<uint8_t> encode_request(const StoreRequest& request);
// Reads one request; nullopt when the client closed the connection.
std::optional<StoreRequest> read_request(const Socket& socket);

void send_reply(const Socket& socket, const std::vector<uint8_t>& payload);
// Reads one reply; nullopt when the deadline passed first.
std::optional<std::vector<uint8_t>> read_reply(const Socket& socket, Clock::time_point deadline);

std::vector<uint8_t> encode_i64(int64_t value);
int64_t decode_i64(const std::vector<uint8_t>& bytes, const char* who);

}  // namespace kiln::distributed::detail
