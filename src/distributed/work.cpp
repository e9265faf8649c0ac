#include <kiln/distributed/work.h>

#include <kiln/core/error.h>

#include "distributed/work_state.h"

namespace kiln::distributed {

namespace detail {

void QueuedWorkState::finish(std::optional<std::string> error) {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    error_ = std::move(error);
  }
  finished_.notify_all();
}

void QueuedWorkState::wait() {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return done_; });
  if (error_) throw Error(*error_);
}

bool QueuedWorkState::completed() const {
  std::lock_guard lock(mutex_);
  return done_;
}

bool QueuedWorkState::succeeded() const {
  std::lock_guard lock(mutex_);
  return done_ && !error_;
}

}  // namespace detail

void Work::wait() const {
  if (state_) state_->wait();
}

void Work::block_current_stream() const {
  if (state_) state_->block_current_stream();
}

bool Work::is_completed() const { return !state_ || state_->completed(); }

bool Work::is_success() const { return !state_ || state_->succeeded(); }

std::string Work::description() const { return state_ ? state_->description() : "no work"; }

}  // namespace kiln::distributed
