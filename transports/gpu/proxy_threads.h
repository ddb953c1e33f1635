#pragma once
// The threads of a CPU proxy (net's sockets, host's copy engines): each runs its pass over the
// FIFOs it owns until stopped, spinning while work moves and yielding its core when idle. The
// first error of any thread is kept and rethrown by check(); the kernels waiting on that
// proxy end by their own bounded waits.
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ccbench {

// Idle passes before a proxy thread yields its core (spin only while work is active). It never
// sleeps: a small message's every step waits for the proxy, and a sleeping thread would add its
// wake-up to each; yield gives the core away only to a thread that wants it.
constexpr int kProxyIdleSpins = 64;

class ProxyThreads {
 public:
  ProxyThreads() = default;
  ~ProxyThreads() { stop(); }
  ProxyThreads(const ProxyThreads&) = delete;
  ProxyThreads& operator=(const ProxyThreads&) = delete;
  // Starts a thread that runs `begin` once, then `pass` (true when it moved anything) until
  // stop(), then `end` once. An exception of any of them ends the thread and is kept.
  void start(std::function<bool()> pass, std::function<void()> begin = {}, std::function<void()> end = {});
  // Stops and joins every thread (the owner calls it before freeing what the passes touch).
  void stop();
  // Rethrows the first error of a thread, if any.
  void check() const;

 private:
  void failed(std::exception_ptr e);
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  mutable std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace ccbench
