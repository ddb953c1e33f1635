// A run's parts that need neither MPI nor a device: the guard's early end (in a child process:
// it ends the process), rank 0's guarded writers and record stream, the stage before MPI, and
// the implementations a run plans.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"
#include "harness/job/bootstrap.h"
#include "harness/job/job_guard.h"
#include "harness/record_stream.h"
#include "harness/run.h"
#include "results/links.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

namespace fs = std::filesystem;

// A fixed path per test: the parent reads what the child of a death test wrote.
std::string scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "ccbench_test_run";
  fs::create_directories(dir);
  return (dir / (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" + name)).string();
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

// What a sink was told, in order.
class Recorder final : public ResultSink {
 public:
  explicit Recorder(std::vector<std::string>& calls) : calls_(calls) {}
  void begin(const Json& context) override { calls_.push_back("begin " + context.dump()); }
  void add(const RunRecord& row) override { calls_.push_back("add " + row.impl + " " + std::to_string(row.bytes)); }
  void finish(const RunOutcome& o) override { calls_.push_back("finish " + o.reason); }
  void revise(const std::vector<RunRecord>& rows) override {
    calls_.push_back("revise " + std::to_string(rows.size()));
  }

 private:
  std::vector<std::string>& calls_;
};

RunRecord measured(const std::string& impl, std::uint64_t bytes) {
  return RecordBuilder().impl(impl).bytes(bytes).busbw(4);
}

// ---------------------------------------------------------------------------------------------
// JobGuard: an early end
// ---------------------------------------------------------------------------------------------

TEST(JobGuardDeathTest, EndJobClosesTheResultsWithItsReasonAndAbortsWhatIsStillAttached) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string run_json = scratch("run.json"), gone = scratch("gone");
  fs::remove(run_json);
  fs::remove(gone);
  EXPECT_EXIT(
      {
        JobGuard guard(std::chrono::seconds(60), 0);
        guard.open_results(make_json_sink(run_json), Json{{"host", "node-a"}});
        {
          const auto detached = guard.attach([&] {
            std::ofstream(gone) << "aborted after it was detached";
            return std::vector<std::string>{};
          });
        }
        const auto kept = guard.attach([] { return std::vector<std::string>{"aborted 2 communicators"}; });
        guard.end_job({.exit_code = 5,
                       .reason = "timeout in 'x' on rank 0",
                       .verdict = "FAILED: timeout",
                       .message = "a stuck rank"});
      },
      ::testing::ExitedWithCode(5), "ccbench: a stuck rank\n(.|\n)*ccbench: rank 0: aborted 2 communicators");
  const Json doc = read_json(run_json);
  EXPECT_EQ(doc["complete"], false);
  EXPECT_EQ(doc["incomplete_reason"], "timeout in 'x' on rank 0");
  EXPECT_EQ(doc["exit_code"], 5);
  EXPECT_EQ(doc["verdict"], "FAILED: timeout");
  EXPECT_EQ(doc["context"]["host"], "node-a");  // the files had not begun: they begin with what was known
  EXPECT_FALSE(fs::exists(gone));
}

TEST(JobGuardDeathTest, APhasePastItsDeadlineEndsTheJobWithExitCode5NamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string run_json = scratch("run.json");
  fs::remove(run_json);
  EXPECT_EXIT(
      {
        JobGuard guard(std::chrono::milliseconds(200), 0);
        guard.identify(0, "node-a", {"node-a"});
        GuardedSink& files = guard.open_results(make_json_sink(run_json), Json::object());
        files.begin(Json{{"host", "node-a"}});
        guard.watchdog().enter("allreduce/ring 4K: iteration 2");
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      ::testing::ExitedWithCode(5),
      "rank 0 \\(host node-a\\): timeout: 'allreduce/ring 4K: iteration 2' has taken 0\\.[0-9] s \\(--timeout 0 s\\)");
  const Json doc = read_json(run_json);
  EXPECT_EQ(doc["incomplete_reason"], "timeout in 'allreduce/ring 4K: iteration 2' on rank 0");
  EXPECT_EQ(doc["exit_code"], 5);
}

TEST(JobGuardDeathTest, ATerminationSignalEndsTheJobWith128PlusTheSignal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        JobGuard guard(std::chrono::seconds(60), 0);
        guard.watchdog().enter("measuring");
        kill(getpid(), SIGTERM);  // to the process: the guard's thread takes it
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      ::testing::ExitedWithCode(128 + SIGTERM),
      "rank 0 \\(host \\?\\) was terminated by SIGTERM during 'measuring'; ending the run with exit code 143");
}

TEST(JobGuard, LeavesTheSignalMaskAsItFoundIt) {
  sigset_t before, during, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  {
    JobGuard guard(std::chrono::seconds(60), 0);
    pthread_sigmask(SIG_SETMASK, nullptr, &during);
    EXPECT_TRUE(sigismember(&during, SIGTERM));
  }
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_EQ(sigismember(&after, SIGTERM), sigismember(&before, SIGTERM));
}

// ---------------------------------------------------------------------------------------------
// Rank 0's writers and rows
// ---------------------------------------------------------------------------------------------

TEST(GuardedSink, AFinishBeforeBeginBeginsWithTheContextKnownAndLaterCallsAreDropped) {
  std::vector<std::string> calls;
  GuardedSink s(std::make_unique<Recorder>(calls), Json{{"a", 1}});
  s.finish({false, "stopped", 5, "FAILED: timeout"});
  s.begin(Json{{"a", 2}});
  s.add(measured("ring", 8));
  s.finish({});
  EXPECT_EQ(calls, (std::vector<std::string>{"begin {\"a\":1}", "finish stopped"}));
  EXPECT_TRUE(s.try_finish({}, std::chrono::milliseconds(1)));  // free: it takes the lock, nothing more happens
  EXPECT_EQ(calls.size(), 2u);
}

TEST(RecordStream, RowsAreCompletedBeforeAnyWriterSeesThemAndKept) {
  std::vector<std::string> calls;
  Recorder out(calls);
  int completions = 0;
  RecordStream stream(out, [&](RunRecord& r) {
    ++completions;
    r.bytes *= 2;  // visible in what the writer gets
    r.efficiency = 0.5;
  });
  stream.begin(Json::object());
  stream.add(measured("ring", 8));
  stream.add_last(measured("tree", 16));
  EXPECT_EQ(calls, (std::vector<std::string>{"begin {}", "add ring 16", "add tree 32"}));
  ASSERT_EQ(stream.rows().size(), 2u);
  EXPECT_EQ(*stream.rows()[1].efficiency, 0.5);
  stream.revise({measured("ring", 8)});  // revised rows are completed again
  EXPECT_EQ(calls.back(), "revise 1");
  EXPECT_EQ(stream.rows().front().bytes, 16u);
  EXPECT_EQ(completions, 3);
}

// ---------------------------------------------------------------------------------------------
// The stage before MPI, and the plan
// ---------------------------------------------------------------------------------------------

void expect_run_usage_error(RunOptions opts, const std::string& message) {
  try {
    Run(std::move(opts)).prepare();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(RunPrepare, RefusesBadOutputsCeilingsAndModelsBeforeMpi) {
  RunOptions files_without_folder;
  files_without_folder.no_files = true;
  files_without_folder.formats = {"table", "csv"};
  expect_run_usage_error(files_without_folder, "--out none writes no files, but --format csv asks for one");
  RunOptions json_into_folder;
  json_into_folder.no_files = true;
  json_into_folder.formats = {"table"};
  json_into_folder.json_file = ::testing::TempDir();
  expect_run_usage_error(json_into_folder, "-J/--output_file: '" + ::testing::TempDir() + "' is a folder");
  const std::string not_links = scratch("not-links.json");
  std::ofstream(not_links) << R"({"schema": "something else"})";
  RunOptions bad_ceilings;
  bad_ceilings.no_files = true;
  bad_ceilings.formats = {"table"};
  bad_ceilings.ceilings_file = not_links;
  expect_run_usage_error(bad_ceilings, "is not a links.json");
  RunOptions bad_model = bad_ceilings;
  bad_model.ceilings_file.clear();
  bad_model.model_topology = "no-such-system";
  expect_run_usage_error(bad_model, "--model no-such-system");
}

// --measure-ceilings is measured by harness/links/, which the engine reaches only through the
// CeilingMeter its caller hands in: without one the run stops before MPI, naming the missing part.
TEST(RunPrepare, MeasuringCeilingsNeedsTheMeterHandedIn) {
  RunOptions opts;
  opts.no_files = true;
  opts.formats = {"table"};
  opts.measure_ceilings = true;
  try {
    ccbench::Run(opts).prepare();
    ADD_FAILURE() << "no error without a CeilingMeter";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime) << e.what();
    EXPECT_NE(std::string(e.what()).find("without a CeilingMeter"), std::string::npos) << e.what();
  }
  int calls = 0;
  CeilingMeter meter = [&calls](bool, const std::string&, const RankLayout&, MPI_Comm, int, std::chrono::milliseconds,
                                std::uint64_t, const std::string&) {
    ++calls;
    return std::vector<LinkCeiling>{};
  };
  EXPECT_NO_THROW(ccbench::Run(opts, meter).prepare());
  EXPECT_EQ(calls, 0);  // measured in measure(), after MPI start-up, never in prepare()
}

TEST(RunPrepare, MakesTheResultsFolderAndReadsTheCeilingsAndTheModel) {
  LinkResult shm;
  shm.transport = "shm";
  shm.mode = "pair";
  shm.src = 0;
  shm.dst = 1;
  shm.bytes = 1 << 20;
  shm.oneway_gbps = 9;
  shm.bidir_gbps = 18;
  const std::string links = scratch("links.json");
  std::ofstream(links) << links_to_json({shm}, {}, Json::object()).dump();
  RunOptions opts;
  opts.out_dir = scratch("results");
  fs::remove_all(opts.out_dir);
  opts.ceilings_file = links;
  opts.model_topology = "cpu-node";
  ccbench::Run run(opts);
  run.prepare();
  EXPECT_EQ(run.out_dir(), opts.out_dir);
  EXPECT_TRUE(fs::is_directory(opts.out_dir));
  ASSERT_EQ(run.ceilings().size(), 1u);
  EXPECT_DOUBLE_EQ(run.ceilings()[0].bidir_gbps, 18);
  ASSERT_TRUE(run.model());
  EXPECT_EQ(run.model()->system.name, "cpu-node");
}

TEST(RunPlan, DefaultImplementationsOnCpuAndRequestedOnesThatCannotRunHere) {
  RunOptions opts;
  std::vector<std::string> names;
  for (const ImplInfo* i : plan_implementations(opts, Device::cpu).impls) names.push_back(i->name);
  EXPECT_EQ(names, (std::vector<std::string>{"mpi", "ring", "tree"}));
  opts.impls = {"ring", "nccl"};
  const SweepPlan plan = plan_implementations(opts, Device::cpu);
  ASSERT_EQ(plan.impls.size(), 1u);
  EXPECT_EQ(plan.impls[0]->name, "ring");
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].first, "nccl");
  EXPECT_EQ(plan.skipped[0].second, "nccl runs on gpu ranks and this run uses cpu ranks (--device)");
}

}  // namespace
}  // namespace ccbench

// The library's file name, where `sig`'s handler is a function of a loaded library; "" otherwise.
// Written here apart from bootstrap.cpp's own lookup, so that a wrong lookup there fails the test
// (a shared one would make the test skip instead).
static std::string signal_handler_library(int sig) {
  struct sigaction a {};
  if (sigaction(sig, nullptr, &a) != 0 ||
      (!(a.sa_flags & SA_SIGINFO) && (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN)))
    return "";
  void* fn =
      (a.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(a.sa_sigaction) : reinterpret_cast<void*>(a.sa_handler);
  Dl_info info{};
  return dladdr(fn, &info) && info.dli_fname ? std::filesystem::path(info.dli_fname).filename().string() : "";
}

// libinfinipath loads with libfabric and, IPATH_NO_BACKTRACE unset, takes six signals in its
// constructor; after the reset none of them runs its handler, and the variable is set.
TEST(LibrarySignalHandlers, InfinipathBacktraceHandlersAreReset) {
  if (!dlopen("libinfinipath.so.4", RTLD_NOW | RTLD_NOLOAD))
    GTEST_SKIP() << "libinfinipath.so.4 is not loaded in this process (a libfabric without the psm provider)";
  if (signal_handler_library(SIGSEGV).rfind("libinfinipath", 0) != 0)
    GTEST_SKIP() << "SIGSEGV's handler is not libinfinipath's (IPATH_NO_BACKTRACE was set when it loaded)";
  EXPECT_GE(ccbench::reset_library_signal_handlers(), 1);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT, SIGTERM})
    EXPECT_EQ(signal_handler_library(sig).rfind("libinfinipath", 0), std::string::npos) << "signal " << sig;
  EXPECT_STREQ(std::getenv("IPATH_NO_BACKTRACE"), "1");
  EXPECT_EQ(ccbench::reset_library_signal_handlers(), 0);
}
