#pragma once
// Learning-rate schedulers, as torch.optim.lr_scheduler: each acts on an optimizer's param groups.
// Construction performs PyTorch's initial step (last_epoch becomes 0 and the groups get the
// epoch-0 rates); each step() advances one epoch (or batch, for OneCycleLR). The rules are
// PyTorch's chainable recursions (each reads the group's current lr), so two schedulers on one
// optimizer compose as in PyTorch.
#include <kiln/optim/optimizer.h>

#include <functional>
#include <string>
#include <vector>

namespace kiln::optim {

// What a scheduler needs to resume (PyTorch's scheduler.state_dict(): last_epoch, _step_count,
// base_lrs, _last_lr). The schedule's own arguments are not saved: rebuild it with the same ones.
struct LRSchedulerState {
  int64_t last_epoch = -1;
  int64_t step_count = 0;
  std::vector<double> base_lrs;
  std::vector<double> last_lr;
};

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  void step();
  // The rates the last step() (or construction) set, one per param group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  // The groups' learning rates when the scheduler was made (PyTorch's initial_lr).
  const std::vector<double>& base_lrs() const { return base_lrs_; }

  // To resume training: load the optimizer's state dict and this one into freshly built ones.
  LRSchedulerState state_dict() const;
  void load_state_dict(const LRSchedulerState& state);

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  // The rates for last_epoch_ (already advanced). Derived constructors call initial_step() once
  // their own fields are set, as PyTorch's constructors end in super().__init__.
  virtual std::vector<double> get_lr() = 0;
  void initial_step();
  double group_lr(size_t group) const { return optimizer_.lr(group); }
  size_t num_groups() const { return optimizer_.num_param_groups(); }

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
  std::vector<double> last_lr_;
};

// lr * gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr * gamma at each milestone epoch (a milestone listed twice multiplies by gamma twice).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, through PyTorch's recursion.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> get_lr() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// Multiplies the base rate by a factor going linearly from start_factor to end_factor over
// total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);

 protected:
  std::vector<double> get_lr() override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// base_lr * lr_lambda(epoch); one function for every group, or one per group.
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, Lambda lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<Lambda> lambdas_;
};

struct OneCycleLROptions {
  double pct_start = 0.3;
  std::string anneal_strategy = "cos";  // "cos" or "linear"
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
};

// The 1cycle policy (Smith & Topin): warm up from max_lr / div_factor to max_lr, anneal to
// initial_lr / final_div_factor (with three_phase, back to the initial rate first), cycling the
// optimizer's momentum (or Adam's beta1) inversely. Stepped once per batch, total_steps times
// at most (PyTorch's total_steps; pass epochs * steps_per_epoch for its other form).
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps,
             OneCycleLROptions options = {});
  // One maximum rate per param group.
  OneCycleLR(Optimizer& optimizer, std::vector<double> max_lrs, int64_t total_steps,
             OneCycleLROptions options = {});

 protected:
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    // Which of the group's rates the phase goes between: 0 initial, 1 max, 2 min.
    int start_lr, end_lr;
    bool start_at_max_momentum, end_at_max_momentum;
  };
  double anneal(double start, double end, double pct) const;

  int64_t total_steps_;
  OneCycleLROptions options_;
  std::vector<Phase> phases_;
  std::vector<double> initial_lrs_, max_lrs_, min_lrs_;
};

}  // namespace kiln::optim
