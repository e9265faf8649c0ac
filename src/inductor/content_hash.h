#pragma once
// A 128-bit content hash for the code cache's keys and integrity checks: MurmurHash3_x64_128
// (Austin Appleby, public domain). Not cryptographic: it guards against accidental collisions
// and corruption, not against someone who can write to the cache folder.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::inductor {

// MurmurHash3_x64_128 of `bytes` with `seed`: {h1, h2} as the reference implementation returns
// them (its output bytes are h1 then h2, each little-endian).
std::array<uint64_t, 2> murmur3_x64_128(std::string_view bytes, uint32_t seed);

// 32 lowercase hex digits: murmur3_x64_128(bytes, 0), h1's digits then h2's.
std::string content_hash(std::string_view bytes);

}  // namespace kiln::inductor
