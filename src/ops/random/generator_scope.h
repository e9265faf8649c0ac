#pragma once
// Which generator the random ops draw from. Registry schemas have no Generator argument type, so
// the typed API installs the caller's generator for the duration of one call; ops called without
// one use the default generator.
#include <kiln/ops/random.h>

namespace kiln::random_detail {

Generator& current_generator();
// The generator a draw on `device` reserves its counters from: the per-call one if installed,
// else the device's default generator.
Generator& current_generator(Device device);

class GeneratorScope {
 public:
  explicit GeneratorScope(Generator* gen);
  ~GeneratorScope();
  GeneratorScope(const GeneratorScope&) = delete;
  GeneratorScope& operator=(const GeneratorScope&) = delete;

 private:
  Generator* previous_;
};

}  // namespace kiln::random_detail
