#pragma once
// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11), inline so
// the per-capability kernels and the generator share one definition.
#include <array>
#include <cstdint>

namespace kiln::random_detail {

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1

using PhiloxBlock = std::array<uint32_t, 4>;

// Ten rounds over a 128-bit counter (four words, low word first) with a 64-bit key.
inline PhiloxBlock philox4x32_10(PhiloxBlock ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * ctr[0];
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * ctr[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    ctr = {hi1 ^ ctr[1] ^ k0, lo1, hi0 ^ ctr[3] ^ k1, lo0};
  }
  return ctr;
}

// The block for counter (lo, hi) under a 64-bit key (the seed).
inline PhiloxBlock philox_block(uint64_t counter_lo, uint64_t counter_hi, uint64_t key) {
  return philox4x32_10({static_cast<uint32_t>(counter_lo), static_cast<uint32_t>(counter_lo >> 32),
                        static_cast<uint32_t>(counter_hi), static_cast<uint32_t>(counter_hi >> 32)},
                       static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
}

// Where a draw's numbers come from: element i of a draw that uses `words` (1, 2 or 4) 32-bit
// words per element reads block (offset + i * words / 4), words starting at (i * words) % 4. The
// mapping depends only on i, so any split of the elements over threads gives the same values.
struct PhiloxStream {
  uint64_t seed = 0;
  uint64_t offset = 0;  // the first reserved counter
};

// Counters a draw of n elements with `words` words each needs.
inline uint64_t philox_blocks(int64_t n, int words) {
  return (static_cast<uint64_t>(n) * static_cast<uint64_t>(words) + 3) / 4;
}

}  // namespace kiln::random_detail
