// Trains a small CNN to say which quadrant of a noisy image holds a bright square.
//
// Data: 1x16x16 images of N(0, 1) noise with a 4x4 square of +1.2 placed at a random position
// inside one quadrant (the class, 0..3: top-left, top-right, bottom-left, bottom-right); 4096
// training images and 1024 held-out images, seeded. Model: Conv2d(1, 8, 3, pad 1) -> BatchNorm2d
// -> ReLU -> MaxPool2d(2) -> Conv2d(8, 16, 3, pad 1) -> BatchNorm2d -> ReLU -> MaxPool2d(2) ->
// Flatten -> Linear(256, 4); cross-entropy, SGD (lr 0.05, momentum 0.9), minibatches of 64.
// Target: > 95% accuracy on the held-out images (eval mode, running BatchNorm statistics).
// Exit code 0 only when the target is reached; seconds on 2 cores.
#include "example_util.h"

#include <cstdio>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;

namespace {

constexpr int64_t kSide = 16, kSquare = 4, kClasses = 4;
constexpr double kTargetAccuracy = 0.95;

struct Dataset {
  Tensor x;  // (N, 1, 16, 16) float32
  Tensor y;  // (N) int64
};

// 1.0 where top <= i < top + kSquare, per row of top (N, 1): an (N, kSide) float mask.
Tensor band(const Tensor& top) {
  Tensor i = kiln::arange(kSide, kiln::kInt64).unsqueeze(0);
  return i.ge(top).to(kiln::kFloat32) * i.lt(top + kSquare).to(kiln::kFloat32);
}

Dataset make_squares(int64_t n) {
  constexpr int64_t half = kSide / 2;
  Tensor row_half = kiln::randint(0, 2, {n, 1}, kiln::kInt64);
  Tensor col_half = kiln::randint(0, 2, {n, 1}, kiln::kInt64);
  // Anywhere inside the quadrant: offsets 0 .. half - kSquare.
  Tensor top = row_half * half + kiln::randint(0, half - kSquare + 1, {n, 1}, kiln::kInt64);
  Tensor left = col_half * half + kiln::randint(0, half - kSquare + 1, {n, 1}, kiln::kInt64);
  Tensor square = band(top).unsqueeze(2) * band(left).unsqueeze(1);  // (N, H, W)
  Tensor x = (kiln::randn({n, kSide, kSide}) + square * 1.2).unsqueeze(1);
  Tensor y = (row_half * 2 + col_half).squeeze(1);
  return {x, y};
}

std::shared_ptr<nn::Sequential> make_cnn() {
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(1, 8, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(8),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Conv2d>(8, 16, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(16),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(16 * (kSide / 4) * (kSide / 4), kClasses));
}

}  // namespace

int main() {
  kiln::manual_seed(0);
  const Dataset train = make_squares(4096);
  const Dataset test = make_squares(1024);

  auto model = make_cnn();
  kiln::optim::SGD optimizer(model->parameters(), {.lr = 0.05, .momentum = 0.9});

  constexpr int64_t kBatch = 64;
  constexpr int kEpochs = 4;
  const int64_t n = train.x.size(0);
  kiln_examples::Stopwatch total;
  double test_accuracy = 0;
  int64_t step = 0;
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    kiln_examples::Stopwatch clock;
    model->train();
    Tensor order = kiln::randperm(n, kiln::kInt64);
    double loss_sum = 0;
    int64_t batches = 0;
    for (int64_t start = 0; start < n; start += kBatch) {
      Tensor idx = order.slice(0, start, std::min(start + kBatch, n));
      Tensor loss =
          F::cross_entropy((*model)(train.x.index_select(0, idx)), train.y.index_select(0, idx));
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>();
      ++batches;
      if (++step % 20 == 0) {
        std::printf("  step %4lld  loss %.4f  %.0f images/s\n", static_cast<long long>(step),
                    loss.item<double>(), static_cast<double>(start + kBatch) / clock.seconds());
        std::fflush(stdout);
      }
    }
    const double images_per_s = static_cast<double>(n) / clock.seconds();
    model->eval();
    {
      kiln::autograd::NoGradGuard no_grad;
      test_accuracy = kiln_examples::accuracy((*model)(test.x), test.y);
    }
    std::printf("epoch %d  step %4lld  mean loss %.4f  test accuracy %.2f%%  %.0f images/s\n",
                epoch, static_cast<long long>(step), loss_sum / batches, 100 * test_accuracy,
                images_per_s);
    std::fflush(stdout);
    if (test_accuracy > 0.99) break;
  }
  const bool reached = test_accuracy > kTargetAccuracy;
  std::printf("%s: held-out accuracy %.2f%% (target > %.0f%%) in %.2f s\n",
              reached ? "PASS" : "FAIL", 100 * test_accuracy, 100 * kTargetAccuracy,
              total.seconds());
  return reached ? 0 : 1;
}
