// MurmurHash3_x64_128, following the reference implementation (smhasher's MurmurHash3.cpp).
#include "inductor/content_hash.h"

#include <fmt/format.h>

namespace kiln::inductor {
namespace {

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// The reference reads blocks as native 64-bit words; little-endian loads make the hash the same
// on every machine (and equal to the reference's on x86 and ARM).
uint64_t load_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t final_mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

uint64_t mix_k1(uint64_t k1) { return rotl64(k1 * kC1, 31) * kC2; }
uint64_t mix_k2(uint64_t k2) { return rotl64(k2 * kC2, 33) * kC1; }

}  // namespace

std::array<uint64_t, 2> murmur3_x64_128(std::string_view bytes, uint32_t seed) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t len = bytes.size();
  const size_t blocks = len / 16;
  uint64_t h1 = seed, h2 = seed;

  for (size_t i = 0; i < blocks; ++i) {
    uint64_t k1 = load_le64(data + 16 * i);
    uint64_t k2 = load_le64(data + 16 * i + 8);
    h1 ^= mix_k1(k1);
    h1 = rotl64(h1, 27) + h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= mix_k2(k2);
    h2 = rotl64(h2, 31) + h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  // The last len % 16 bytes: bytes 8.. into k2, bytes 0..7 into k1.
  const unsigned char* tail = data + 16 * blocks;
  const size_t rest = len & 15;
  uint64_t k1 = 0, k2 = 0;
  for (size_t i = rest; i > 8; --i) k2 ^= uint64_t{tail[i - 1]} << (8 * (i - 9));
  if (rest > 8) h2 ^= mix_k2(k2);
  for (size_t i = rest < 8 ? rest : 8; i > 0; --i) k1 ^= uint64_t{tail[i - 1]} << (8 * (i - 1));
  if (rest > 0) h1 ^= mix_k1(k1);

  h1 ^= len;
  h2 ^= len;
  h1 += h2;
  h2 += h1;
  h1 = final_mix(h1);
  h2 = final_mix(h2);
  h1 += h2;
  h2 += h1;
  return {h1, h2};
}

std::string content_hash(std::string_view bytes) {
  auto [h1, h2] = murmur3_x64_128(bytes, 0);
  return fmt::format("{:016x}{:016x}", h1, h2);
}

}  // namespace kiln::inductor
