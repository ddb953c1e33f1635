#include "transports/gpu/proxy_threads.h"

namespace ccbench {

void ProxyThreads::start(std::function<bool()> pass, std::function<void()> begin, std::function<void()> end) {
  threads_.emplace_back([this, pass = std::move(pass), begin = std::move(begin), end = std::move(end)] {
    try {
      if (begin) begin();
      int idle = 0;
      while (!stop_.load(std::memory_order_relaxed)) {
        idle = pass() ? 0 : idle + 1;
        if (idle > kProxyIdleSpins) std::this_thread::yield();
      }
      if (end) end();
    } catch (...) {
      failed(std::current_exception());
    }
  });
}

void ProxyThreads::stop() {
  stop_ = true;
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void ProxyThreads::check() const {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (error_) std::rethrow_exception(error_);
}

void ProxyThreads::failed(std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (!error_) error_ = e;
}

}  // namespace ccbench
