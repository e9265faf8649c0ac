// The Philox generator state (seed, offset), the default generators (the CPU's and one per CUDA
// device, as PyTorch's) and the per-call override.
#include "ops/random/generator_scope.h"
#include "ops/random/philox.h"

#include <kiln/cuda/cuda.h>

#include <map>
#include <memory>
#include <mutex>

namespace kiln {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seed_;
}

uint64_t Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t first = offset_;
  offset_ += n;
  return first;
}

std::pair<uint64_t, uint64_t> Generator::seed_and_reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t first = offset_;
  offset_ += n;
  return {seed_, first};
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(mu_);
  return offset_;
}

void Generator::set_offset(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  offset_ = offset;
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

namespace {
// The CUDA devices' default generators, made on first use, and the seed they start from.
struct DeviceGenerators {
  std::mutex mu;
  uint64_t seed = Generator().seed();
  std::map<int, std::unique_ptr<Generator>> cuda;
};

DeviceGenerators& device_generators() {
  static DeviceGenerators g;
  return g;
}
}  // namespace

Generator& default_generator(Device device) {
  if (!device.is_cuda()) return default_generator();
  const int index = device.has_index() ? device.index() : cuda::current_device();
  DeviceGenerators& g = device_generators();
  std::lock_guard<std::mutex> lock(g.mu);
  std::unique_ptr<Generator>& gen = g.cuda[index];
  if (!gen) gen = std::make_unique<Generator>(g.seed);
  return *gen;
}

void manual_seed(uint64_t seed) {
  default_generator().manual_seed(seed);
  DeviceGenerators& g = device_generators();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  for (auto& [index, gen] : g.cuda) gen->manual_seed(seed);
}

std::array<uint32_t, 4> Philox4x32::draw(uint64_t counter_lo, uint64_t counter_hi, uint64_t key) {
  return random_detail::philox_block(counter_lo, counter_hi, key);
}

namespace random_detail {
namespace {
thread_local Generator* tls_generator = nullptr;
}

Generator& current_generator() { return tls_generator ? *tls_generator : default_generator(); }

Generator& current_generator(Device device) {
  return tls_generator ? *tls_generator : default_generator(device);
}

GeneratorScope::GeneratorScope(Generator* gen) : previous_(tls_generator) {
  if (gen) tls_generator = gen;
}
GeneratorScope::~GeneratorScope() { tls_generator = previous_; }

}  // namespace random_detail
}  // namespace kiln
