#pragma once
// Grad mode, as in PyTorch: a thread-local switch that decides whether ops record the history
// backward() needs. Guards restore the previous state when they go out of scope.
namespace kiln::autograd {

class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// torch.no_grad(): ops run without recording history.
class NoGradGuard {
 public:
  NoGradGuard() : previous_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// torch.enable_grad(): records history again inside a no_grad region.
class EnableGradGuard {
 public:
  EnableGradGuard() : previous_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(previous_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool previous_;
};

// torch.inference_mode(): no history, and no bookkeeping for it either. Grad mode is off inside;
// InferenceMode::is_enabled() lets layers skip work that only autograd needs.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true)
      : previous_inference_(is_enabled()), previous_grad_(GradMode::is_enabled()) {
    set_enabled(enabled);
    if (enabled) GradMode::set_enabled(false);
  }
  ~InferenceMode() {
    set_enabled(previous_inference_);
    GradMode::set_enabled(previous_grad_);
  }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled();

 private:
  static void set_enabled(bool enabled);
  bool previous_inference_;
  bool previous_grad_;
};

}  // namespace kiln::autograd
