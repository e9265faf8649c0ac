#pragma once
// Random numbers from a counter-based Philox4x32-10 generator: a (seed, offset) pair fully
// determines every draw, so eager and compiled code can produce the same numbers.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

namespace kiln {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) : seed_(seed) {}
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  // Reserves `n` 128-bit Philox counters and returns the first; each call advances the offset
  // so later draws never reuse counters.
  uint64_t reserve(uint64_t n);
  // The same, also returning the seed read under the same lock: {seed, first counter}, so a
  // concurrent manual_seed cannot pair one seed with another seed's offset.
  std::pair<uint64_t, uint64_t> seed_and_reserve(uint64_t n);
  uint64_t offset() const;
  void set_offset(uint64_t offset);

 private:
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide default generator of the CPU.
Generator& default_generator();
// The default generator of `device`: the CPU's above for the CPU (and the meta device); each CUDA
// device has its own, as in PyTorch, so draws on one device leave the others' offsets alone. A
// CUDA generator starts at offset 0 with the last manual_seed's seed (the CPU's initial seed
// before any), so a seed gives every device the CPU's stream. An unindexed CUDA device means the
// current one.
Generator& default_generator(Device device);
// Reseeds the default generators of every device (their offsets go back to 0).
void manual_seed(uint64_t seed);

// Philox4x32-10: four 32-bit random words for a counter and key.
struct Philox4x32 {
  static std::array<uint32_t, 4> draw(uint64_t counter_lo, uint64_t counter_hi, uint64_t key);
};

Tensor rand(IntList size, TensorOptions options = {}, Generator* gen = nullptr,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor randn(IntList size, TensorOptions options = {}, Generator* gen = nullptr,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// Integers uniformly in [low, high); dtype defaults to int64.
Tensor randint(int64_t low, int64_t high, IntList size, TensorOptions options = {},
               Generator* gen = nullptr,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor randint(int64_t high, IntList size, TensorOptions options = {}, Generator* gen = nullptr,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor rand_like(const Tensor& other, TensorOptions options = {}, Generator* gen = nullptr,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor randn_like(const Tensor& other, TensorOptions options = {}, Generator* gen = nullptr,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor normal(double mean, double std, IntList size, TensorOptions options = {},
              Generator* gen = nullptr,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// Each element is 1 with the probability in `p` (same shape), else 0; dtype of p.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor bernoulli(const Tensor& self, double p, Generator* gen = nullptr,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor randperm(int64_t n, TensorOptions options = {}, Generator* gen = nullptr,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& uniform_(Tensor& self, double from = 0.0, double to = 1.0, Generator* gen = nullptr,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& normal_(Tensor& self, double mean = 0.0, double std = 1.0, Generator* gen = nullptr,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& bernoulli_(Tensor& self, double p = 0.5, Generator* gen = nullptr,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
