#include "harness/termination.h"

#include <pthread.h>
#include <unistd.h>

namespace ccbench {

TerminationSignals::TerminationSignals() {
  sigemptyset(&set_);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set_, s);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  thread_ = std::thread([this] { wait_loop(); });
}

TerminationSignals::~TerminationSignals() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigwait(); ignored as stopping_
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void TerminationSignals::set_handler(Handler h) {
  std::lock_guard lock(mu_);
  handler_ = std::move(h);
}

void TerminationSignals::wait_loop() {
  while (true) {
    int sig = 0;
    if (sigwait(&set_, &sig) != 0) continue;
    Handler h;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      h = handler_;
    }
    if (h) h(sig);
    _exit(128 + sig);
  }
}

}  // namespace ccbench
