// The proxy threads shared by the net and host copy-engine proxies (transports/gpu/proxy_threads.h):
// begin, passes until stop, end; the first error kept and rethrown by check().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/error.h"
#include "transports/gpu/proxy_threads.h"

namespace ccbench {
namespace {

// Waits (up to 10 s) until `done` holds.
template <typename F>
bool eventually(F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The message check() rethrows (an Error(runtime)), or "" while there is none.
std::string proxy_error_of(const ProxyThreads& t) {
  try {
    t.check();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    return e.what();
  }
  return "";
}

TEST(ProxyThreads, RunsBeginThenPassesUntilStopThenEnd) {
  std::atomic<int> begun{0}, passes{0}, ended{0};
  ProxyThreads t;
  t.start([&] { return ++passes % 2 == 0; }, [&] { ++begun; }, [&] { ++ended; });
  ASSERT_TRUE(eventually([&] { return passes > 1000; }));
  EXPECT_EQ(begun, 1);
  EXPECT_EQ(ended, 0);
  t.stop();
  EXPECT_EQ(ended, 1);
  const int after = passes;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(passes, after);  // joined: no pass after stop()
  EXPECT_NO_THROW(t.check());
}

TEST(ProxyThreads, KeepsTheFirstErrorForCheck) {
  std::atomic<int> healthy{0};
  ProxyThreads t;
  t.start([]() -> bool { fail(ExitCode::runtime, "copy to rank 3 failed"); });
  t.start([&] { return ++healthy > 0; });  // another thread goes on
  ASSERT_TRUE(eventually([&] { return !proxy_error_of(t).empty(); }));
  EXPECT_EQ(proxy_error_of(t), "copy to rank 3 failed");
  const int before = healthy;
  EXPECT_TRUE(eventually([&] { return healthy > before; }));
  t.stop();
  EXPECT_EQ(proxy_error_of(t), "copy to rank 3 failed");  // kept after stop
}

TEST(ProxyThreads, AnErrorInBeginEndsThatThreadBeforeAnyPass) {
  std::atomic<int> passes{0};
  ProxyThreads t;
  t.start([&] { return ++passes > 0; }, [] { fail(ExitCode::runtime, "cudaSetDevice failed"); });
  ASSERT_TRUE(eventually([&] { return !proxy_error_of(t).empty(); }));
  EXPECT_EQ(proxy_error_of(t), "cudaSetDevice failed");
  t.stop();
  EXPECT_EQ(passes, 0);
}

}  // namespace
}  // namespace ccbench
