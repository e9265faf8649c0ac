// The LR scheduler base and the epoch-based schedulers, with torch.optim.lr_scheduler's
// recursive (chainable) get_lr rules.
#include <kiln/core/error.h>
#include <kiln/optim/lr_scheduler.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kiln::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (size_t g = 0; g < optimizer_.num_param_groups(); ++g) base_lrs_.push_back(optimizer_.lr(g));
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  std::vector<double> lrs = get_lr();
  last_lr_.clear();
  for (size_t g = 0; g < lrs.size(); ++g) {
    optimizer_.set_lr(g, lrs[g]);
    last_lr_.push_back(optimizer_.lr(g));
  }
}

LRSchedulerState LRScheduler::state_dict() const {
  return {last_epoch_, step_count_, base_lrs_, last_lr_};
}

void LRScheduler::load_state_dict(const LRSchedulerState& state) {
  KILN_CHECK(state.base_lrs.size() == num_groups() && state.last_lr.size() == num_groups(),
             "LRScheduler.load_state_dict: the state has {} base_lrs and {} last_lr for an "
             "optimizer with {} param groups",
             state.base_lrs.size(), state.last_lr.size(), num_groups());
  last_epoch_ = state.last_epoch;
  step_count_ = state.step_count;
  base_lrs_ = state.base_lrs;
  last_lr_ = state.last_lr;
}

// ---- StepLR ----
StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  KILN_CHECK(step_size > 0, "StepLR: step_size should be positive, got {}", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs;
  bool decay = last_epoch_ != 0 && last_epoch_ % step_size_ == 0;
  for (size_t g = 0; g < num_groups(); ++g) lrs.push_back(group_lr(g) * (decay ? gamma_ : 1.0));
  return lrs;
}

// ---- MultiStepLR ----
MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  std::vector<double> lrs;
  for (size_t g = 0; g < num_groups(); ++g)
    lrs.push_back(hits == 0 ? group_lr(g)
                            : group_lr(g) * std::pow(gamma_, static_cast<double>(hits)));
  return lrs;
}

// ---- CosineAnnealingLR ----
CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  KILN_CHECK(T_max > 0, "CosineAnnealingLR: T_max should be positive, got {}", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  const double pi = std::numbers::pi;
  const double T = static_cast<double>(T_max_), e = static_cast<double>(last_epoch_);
  std::vector<double> lrs;
  for (size_t g = 0; g < num_groups(); ++g) {
    double lr = group_lr(g), base = base_lrs_[g];
    if (last_epoch_ == 0) {
      lrs.push_back(lr);
    } else if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0) {
      // The restart of the period: PyTorch's rule steps back up by the first decrement.
      lrs.push_back(lr + (base - eta_min_) * (1 - std::cos(pi / T)) / 2);
    } else {
      lrs.push_back((1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) *
                        (lr - eta_min_) +
                    eta_min_);
    }
  }
  return lrs;
}

// ---- LinearLR ----
LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  KILN_CHECK(start_factor > 0 && start_factor <= 1,
             "LinearLR: Starting multiplicative factor expected to be greater than 0 and less or "
             "equal to 1, got {}",
             start_factor);
  KILN_CHECK(end_factor >= 0 && end_factor <= 1,
             "LinearLR: Ending multiplicative factor expected to be between 0 and 1, got {}",
             end_factor);
  KILN_CHECK(total_iters > 0, "LinearLR: total_iters should be positive, got {}", total_iters);
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs;
  for (size_t g = 0; g < num_groups(); ++g) {
    double lr = group_lr(g);
    if (last_epoch_ == 0) {
      lrs.push_back(lr * start_factor_);
    } else if (last_epoch_ > total_iters_) {
      lrs.push_back(lr);
    } else {
      double delta = end_factor_ - start_factor_;
      lrs.push_back(lr * (1.0 + delta / (static_cast<double>(total_iters_) * start_factor_ +
                                         static_cast<double>(last_epoch_ - 1) * delta)));
    }
  }
  return lrs;
}

// ---- LambdaLR ----
LambdaLR::LambdaLR(Optimizer& optimizer, Lambda lr_lambda)
    : LambdaLR(optimizer, std::vector<Lambda>(optimizer.num_param_groups(), lr_lambda)) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas)
    : LRScheduler(optimizer), lambdas_(std::move(lr_lambdas)) {
  KILN_CHECK(lambdas_.size() == optimizer.num_param_groups(),
             "LambdaLR: Expected {} lr_lambdas, but got {}", optimizer.num_param_groups(),
             lambdas_.size());
  for (size_t g = 0; g < lambdas_.size(); ++g)
    KILN_CHECK(static_cast<bool>(lambdas_[g]), "LambdaLR: lr_lambda {} is empty", g);
  initial_step();
}

std::vector<double> LambdaLR::get_lr() {
  std::vector<double> lrs;
  for (size_t g = 0; g < num_groups(); ++g) lrs.push_back(base_lrs_[g] * lambdas_[g](last_epoch_));
  return lrs;
}

}  // namespace kiln::optim
