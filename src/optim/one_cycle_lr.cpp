// OneCycleLR, as torch.optim.lr_scheduler.OneCycleLR: piecewise phases between the initial, max
// and min rates, cosine or linear annealing within each, momentum cycled the opposite way.
#include <kiln/core/error.h>
#include <kiln/optim/lr_scheduler.h>

#include <cmath>
#include <numbers>

namespace kiln::optim {

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps,
                       OneCycleLROptions options)
    : OneCycleLR(optimizer, std::vector<double>(optimizer.num_param_groups(), max_lr), total_steps,
                 std::move(options)) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, std::vector<double> max_lrs, int64_t total_steps,
                       OneCycleLROptions options)
    : LRScheduler(optimizer), total_steps_(total_steps), options_(std::move(options)) {
  const OneCycleLROptions& o = options_;
  KILN_CHECK(total_steps > 0, "OneCycleLR: Expected positive integer total_steps, but got {}",
             total_steps);
  KILN_CHECK(o.pct_start >= 0 && o.pct_start <= 1,
             "OneCycleLR: Expected float between 0 and 1 pct_start, but got {}", o.pct_start);
  KILN_CHECK(o.anneal_strategy == "cos" || o.anneal_strategy == "linear",
             "OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', instead got {}",
             o.anneal_strategy);
  KILN_CHECK(max_lrs.size() == optimizer.num_param_groups(),
             "OneCycleLR: expected {} values for max_lr, got {}", optimizer.num_param_groups(),
             max_lrs.size());
  KILN_CHECK(!o.cycle_momentum || optimizer.has_momentum(),
             "OneCycleLR: optimizer must support momentum or beta1 with `cycle_momentum` option "
             "enabled");

  const double total = static_cast<double>(total_steps);
  if (o.three_phase) {
    phases_ = {{o.pct_start * total - 1, 0, 1, true, false},
               {2 * o.pct_start * total - 2, 1, 0, false, true},
               {total - 1, 0, 2, true, true}};
  } else {
    phases_ = {{o.pct_start * total - 1, 0, 1, true, false}, {total - 1, 1, 2, false, true}};
  }
  max_lrs_ = std::move(max_lrs);
  for (double m : max_lrs_) {
    initial_lrs_.push_back(m / o.div_factor);
    min_lrs_.push_back(initial_lrs_.back() / o.final_div_factor);
  }
  base_lrs_ = initial_lrs_;
  if (o.cycle_momentum) {
    for (size_t g = 0; g < optimizer.num_param_groups(); ++g)
      optimizer.set_momentum(g, o.max_momentum);
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy == "cos")
    return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  KILN_CHECK(last_epoch_ <= total_steps_,
             "OneCycleLR: Tried to step {} times. The specified number of total steps is {}",
             last_epoch_, total_steps_);
  const double step_num = static_cast<double>(last_epoch_);
  std::vector<double> lrs;
  for (size_t g = 0; g < num_groups(); ++g) {
    const double rates[3] = {initial_lrs_[g], max_lrs_[g], min_lrs_[g]};
    double start_step = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (step_num <= ph.end_step || i + 1 == phases_.size()) {
        double pct = (step_num - start_step) / (ph.end_step - start_step);
        lrs.push_back(anneal(rates[ph.start_lr], rates[ph.end_lr], pct));
        if (options_.cycle_momentum) {
          double m0 = ph.start_at_max_momentum ? options_.max_momentum : options_.base_momentum;
          double m1 = ph.end_at_max_momentum ? options_.max_momentum : options_.base_momentum;
          optimizer_.set_momentum(g, anneal(m0, m1, pct));
        }
        break;
      }
      start_step = ph.end_step;
    }
  }
  return lrs;
}

}  // namespace kiln::optim
