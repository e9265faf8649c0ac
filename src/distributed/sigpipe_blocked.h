#pragma once
// Writing to a socket whose peer died raises SIGPIPE, and its default action ends the process.
// Gloo writes with plain send/writev, so the threads that run it must have SIGPIPE blocked: the
// write then fails with EPIPE, which Gloo reports as an error (a kiln::Error for the caller). A
// thread inherits its creator's signal mask, so threads started inside this scope (Gloo's event
// loop, the group's worker) keep SIGPIPE blocked for life; the creating thread gets its own mask
// back when the scope ends.
#include <signal.h>

namespace kiln::distributed::detail {

class SigpipeBlocked {
 public:
  SigpipeBlocked();
  // Discards a SIGPIPE raised in the scope (it would kill the process once unblocked) and
  // restores the mask.
  ~SigpipeBlocked();
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace kiln::distributed::detail
