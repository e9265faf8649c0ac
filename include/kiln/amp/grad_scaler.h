#pragma once
// Loss scaling for float16 training (PyTorch's torch.amp.GradScaler): the loss is multiplied by a
// large scale before backward so that small float16 gradients do not flush to zero; step()
// divides the gradients by the scale and skips the optimizer step when any of them is inf or NaN;
// update() halves the scale after such a step and doubles it after `growth_interval` clean ones.
//
//   kiln::GradScaler scaler;
//   for (...) {
//     optimizer.zero_grad();
//     Tensor loss;
//     { kiln::autocast amp(kiln::Device::cuda(), kiln::DType::Float16); loss = ...; }
//     scaler.scale(loss).backward();
//     scaler.step(optimizer);  // or scaler.unscale_(optimizer); clip; scaler.step(optimizer);
//     scaler.update();
//   }
#include <kiln/core/tensor.h>
#include <kiln/optim/optimizer.h>

#include <map>

namespace kiln {

class GradScaler {
 public:
  struct Options {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
    bool enabled = true;
  };
  explicit GradScaler(Options options);
  GradScaler() : GradScaler(Options{}) {}

  // outputs * scale (outputs itself when disabled).
  Tensor scale(const Tensor& outputs) const;
  // Divides the optimizer's gradients by the scale, in place, and records whether any is inf or
  // NaN. Once per optimizer between update() calls; raises kiln::Error on a second call.
  void unscale_(optim::Optimizer& optimizer);
  // unscale_ (unless done), then optimizer.step() unless a gradient was inf or NaN. Returns
  // whether the step ran.
  bool step(optim::Optimizer& optimizer);
  // Adjusts the scale from the steps since the last update (backoff if any found inf or NaN,
  // growth after growth_interval clean updates in a row).
  void update();

  double get_scale() const { return options_.enabled ? scale_ : 1.0; }
  bool is_enabled() const { return options_.enabled; }
  int64_t growth_tracker() const { return growth_tracker_; }

 private:
  Options options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  // Per optimizer since the last update: unscaled, and whether an inf/NaN was found.
  std::map<const optim::Optimizer*, bool> found_inf_;
};

}  // namespace kiln
