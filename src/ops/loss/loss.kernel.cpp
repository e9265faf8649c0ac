#include "ops/loss/loss_kernels.h"
// loops.h and unary_math.h after the kernels header: they need capability.h's namespace macro.
#include "ops/cpu/loops.h"
#include "ops/unary/unary_math.h"

#include <algorithm>
#include <cmath>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

template <typename T>
void mse(ops::TensorIterator& iter) {
  cpu_kernel_vec(
      iter,
      [](T x, T t) {
        const T d = x - t;
        return d * d;
      },
      [](Vec<T> x, Vec<T> t) {
        const Vec<T> d = x - t;
        return d * d;
      });
}

template <typename T>
void smooth_l1(ops::TensorIterator& iter, T beta) {
  if (beta == T(0)) {  // the limit: plain L1 (and no division by zero)
    cpu_kernel_vec(
        iter, [](T x, T t) { return std::abs(x - t); },
        [](Vec<T> x, Vec<T> t) { return vabs(x - t); });
    return;
  }
  const T half_over_beta = T(0.5) / beta, half_beta = T(0.5) * beta;
  cpu_kernel_vec(
      iter,
      [=](T x, T t) {
        const T d = std::abs(x - t);
        return d < beta ? half_over_beta * d * d : d - half_beta;
      },
      [=](Vec<T> x, Vec<T> t) {
        const Vec<T> d = vabs(x - t);
        return select<T>(d < Vec<T>(beta), Vec<T>(half_over_beta) * d * d, d - Vec<T>(half_beta));
      });
}

template <typename T>
void huber(ops::TensorIterator& iter, T delta) {
  const T half_delta = T(0.5) * delta;
  cpu_kernel_vec(
      iter,
      [=](T x, T t) {
        const T d = std::abs(x - t);
        return d < delta ? T(0.5) * d * d : delta * (d - half_delta);
      },
      [=](Vec<T> x, Vec<T> t) {
        const Vec<T> d = vabs(x - t);
        return select<T>(d < Vec<T>(delta), Vec<T>(T(0.5)) * d * d,
                         Vec<T>(delta) * (d - Vec<T>(half_delta)));
      });
}

template <typename T>
void binary_cross_entropy(ops::TensorIterator& iter) {
  cpu_kernel(iter, [](T x, T t) {
    return (t - T(1)) * std::max(std::log1p(-x), T(-100)) - t * std::max(std::log(x), T(-100));
  });
}

void pointwise_loss_kernel(ops::TensorIterator& iter, ops::PointwiseLoss kind, double param) {
  auto run = [&]<typename T>() {
    switch (kind) {
      case ops::PointwiseLoss::Mse:
        return mse<T>(iter);
      case ops::PointwiseLoss::SmoothL1:
        return smooth_l1<T>(iter, static_cast<T>(param));
      case ops::PointwiseLoss::Huber:
        return huber<T>(iter, static_cast<T>(param));
      case ops::PointwiseLoss::BinaryCrossEntropy:
        return binary_cross_entropy<T>(iter);
    }
  };
  if (iter.dtype(0) == DType::Float64) {
    run.template operator()<double>();
  } else {
    run.template operator()<float>();
  }
}

}  // namespace
KILN_REGISTER_KERNEL(ops::pointwise_loss_kernels, &pointwise_loss_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
