#pragma once
// An orderly end on SIGTERM, SIGINT and SIGHUP (mpirun ends the other ranks with SIGTERM when one
// fails; Slurm on scancel or at the time limit; Ctrl-C): the signals are blocked in every thread
// and one thread waits for them and runs the handler, in normal thread context, so that it can
// close the result files as incomplete before the process ends.
#include <csignal>
#include <functional>
#include <mutex>
#include <thread>

namespace ccbench {

class TerminationSignals {
 public:
  // The handler gets the signal number and must end the process; without one the process ends
  // with exit code 128 + signal, as a shell reports it.
  using Handler = std::function<void(int signal)>;
  // Create before any other thread (MPI, CUDA and the watchdog start threads): threads inherit
  // the blocked signals from their creator.
  TerminationSignals();
  ~TerminationSignals();
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

  void set_handler(Handler h);

 private:
  void wait_loop();
  sigset_t set_{}, previous_{};
  std::mutex mu_;
  Handler handler_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ccbench
