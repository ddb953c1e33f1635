#include "harness/job/termination.h"

#include <pthread.h>
#include <unistd.h>

namespace ccbench {

TerminationSignals::TerminationSignals(Handler handler) : handler_(std::move(handler)) {
  sigemptyset(&set_);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set_, s);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  thread_ = std::thread([this] { wait_loop(); });
}

TerminationSignals::~TerminationSignals() {
  stop();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void TerminationSignals::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigwait(); ignored as stopping_
  thread_.join();
}

void TerminationSignals::wait_loop() {
  while (true) {
    siginfo_t info{};
    const int sig = sigwaitinfo(&set_, &info);
    if (sig < 0) continue;
    std::lock_guard lock(mu_);  // held while the handler runs: stop() waits for it
    if (stopping_) return;
    if (handler_) handler_(sig, info.si_code == SI_USER && info.si_pid == getppid());
    _exit(128 + sig);
  }
}

}  // namespace ccbench
