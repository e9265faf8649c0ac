#pragma once
// Small helpers the training examples share: a wall-clock stopwatch for throughput lines and the
// accuracy of class logits against integer labels.
#include <kiln/kiln.h>

#include <chrono>

namespace kiln_examples {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void reset() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Fraction of rows of logits (N, C) whose argmax equals labels (N).
inline double accuracy(const kiln::Tensor& logits, const kiln::Tensor& labels) {
  kiln::autograd::NoGradGuard no_grad;
  return logits.argmax(1).eq(labels).to(kiln::kFloat32).mean().item<double>();
}

}  // namespace kiln_examples
