#include "distributed/sigpipe_blocked.h"

#include <pthread.h>

#include <ctime>

namespace kiln::distributed::detail {

SigpipeBlocked::SigpipeBlocked() {
  sigset_t sigpipe;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &sigpipe, &previous_);
}

SigpipeBlocked::~SigpipeBlocked() {
  // A SIGPIPE already blocked and pending before the scope is the caller's: leave it be.
  if (!sigismember(&previous_, SIGPIPE)) {
    sigset_t sigpipe;
    sigemptyset(&sigpipe);
    sigaddset(&sigpipe, SIGPIPE);
    timespec no_wait{0, 0};
    while (sigtimedwait(&sigpipe, nullptr, &no_wait) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace kiln::distributed::detail
