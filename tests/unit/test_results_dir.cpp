// The results folder of a launch (harness/results_dir.h): one holder at a time, named to the next;
// an earlier run refused unless --overwrite; a lock left by an ended launch holds nobody; a folder
// made and never used goes again. flock() locks belong to an open file, so one process can play
// two launches.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "harness/results_dir.h"
#include "harness/run.h"
#include "usage_error.h"

namespace ccbench {
namespace {

namespace fs = std::filesystem;

std::string fresh(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "ccbench_test_results_dir" /
                       (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir.string();
}

std::string host() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

FolderRequest request(const std::string& dir, const std::string& command = "ccbench --out x") {
  return {dir, {"results.csv", "run.json"}, false, command};
}

TEST(ResultsFolder, ASecondLaunchIsRefusedNamingTheHolderUntilTheFirstEnds) {
  const std::string dir = fresh("taken");
  {
    ResultsFolder first = prepare_output_dir(request(dir, "ccbench -b 8 --out taken"));
    first.mark_used();
    const nlohmann::json holder = nlohmann::json::parse(std::ifstream(dir + "/" + kFolderLockName));
    EXPECT_EQ(holder["pid"], static_cast<long>(getpid()));
    EXPECT_EQ(holder["host"], host());
    EXPECT_EQ(holder["command"], "ccbench -b 8 --out taken");
    const std::string why = usage_error([&] { prepare_output_dir(request(dir)); });
    EXPECT_NE(why.find(fmt::format("--out: the results folder '{}' is in use by another ccbench launch (pid {} on host "
                                   "{}, started ", dir, getpid(), host())),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("ccbench -b 8 --out taken); wait for it to end, or give another --out"), std::string::npos) << why;
  }
  ResultsFolder again = prepare_output_dir(request(dir));  // released with its holder
  EXPECT_EQ(again.path(), dir);
}

TEST(ResultsFolder, ALockLeftByAnEndedLaunchHoldsNobody) {
  const std::string dir = fresh("stale");
  fs::create_directories(dir);
  std::ofstream(dir + "/" + kFolderLockName) << R"({"pid": 1, "host": "gone", "started": "long ago", "command": "x"})";
  ResultsFolder folder = prepare_output_dir(request(dir));
  const nlohmann::json holder = nlohmann::json::parse(std::ifstream(dir + "/" + kFolderLockName));
  EXPECT_EQ(holder["pid"], static_cast<long>(getpid()));
}

TEST(ResultsFolder, AnEarlierRunIsRefusedUnlessOverwriteWhichRemovesItsFiles) {
  const std::string dir = fresh("earlier");
  fs::create_directories(dir);
  std::ofstream(dir + "/results.csv") << "old\n";
  std::ofstream(dir + "/run.json") << "{}\n";
  std::ofstream(dir + "/notes.txt") << "mine\n";
  const std::string why = usage_error([&] { prepare_output_dir(request(dir)); });
  EXPECT_NE(why.find("already holds the results of an earlier run (results.csv, run.json)"), std::string::npos) << why;
  EXPECT_NE(why.find("give another --out, leave --out out for a new folder, or add --overwrite"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/results.csv"));
  FolderRequest overwrite = request(dir);
  overwrite.overwrite = true;
  ResultsFolder folder = prepare_output_dir(overwrite);
  EXPECT_FALSE(fs::exists(dir + "/results.csv"));
  EXPECT_FALSE(fs::exists(dir + "/run.json"));
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));  // not a file of the run: left alone
}

TEST(ResultsFolder, AFolderMadeAndNeverUsedGoesAgainOthersStay) {
  const std::string made = fresh("made");
  { ResultsFolder unused = prepare_output_dir(request(made)); }
  EXPECT_FALSE(fs::exists(made));
  {
    ResultsFolder used = prepare_output_dir(request(made));
    used.mark_used();
  }
  EXPECT_TRUE(fs::is_directory(made));
  const std::string given = fresh("given");
  fs::create_directories(given);
  { ResultsFolder unused = prepare_output_dir(request(given)); }
  EXPECT_TRUE(fs::is_directory(given));  // it was there before the launch
}

TEST(ResultsFolder, ANewTimestampedFolderWhenNoneIsNamed) {
  const fs::path cwd = fs::current_path();
  const std::string base = fresh("default");
  fs::create_directories(base);
  fs::current_path(base);
  {
    ResultsFolder a = prepare_output_dir(request(""));
    a.mark_used();
    ResultsFolder b = prepare_output_dir(request(""));
    b.mark_used();
    EXPECT_NE(a.path(), b.path());
    EXPECT_EQ(a.path().rfind("ccbench-results/", 0), 0u) << a.path();
  }
  fs::current_path(cwd);
}

// One racing launch in a child process: waits on `go`, then prepares `dir`. The winner keeps the
// folder for a while (the loser's clean-up, if any, happens meanwhile), writes its results.csv,
// and checks that its folder and lock file are still there and still its own: exit 0; refused:
// exit 2 (anything else: 1).
[[noreturn]] void race_one(const std::string& dir, int go) {
  char c = 0;
  if (read(go, &c, 1) != 1) _exit(1);
  int code = 1;
  try {
    ResultsFolder f = prepare_output_dir(request(dir));
    struct stat before {};
    stat((dir + "/" + kFolderLockName).c_str(), &before);
    usleep(200 * 1000);
    f.mark_used();
    std::ofstream(dir + "/results.csv") << "mine\n";
    struct stat after {};
    const bool intact = stat((dir + "/" + kFolderLockName).c_str(), &after) == 0 && after.st_ino == before.st_ino &&
                        std::ifstream(dir + "/results.csv").good();
    code = intact ? 0 : 1;
  } catch (const Error& e) {
    code = e.code() == ExitCode::usage ? 2 : 1;
  }
  _exit(code);
}

TEST(ResultsFolder, TwoLaunchesIntoOneNewFolderTwentyTimesOneWinnerItsFolderIntact) {
  for (int trial = 0; trial < 20; ++trial) {
    const std::string dir = fresh(fmt::format("race-{}", trial));
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    pid_t kids[2];
    for (pid_t& k : kids) {
      k = fork();
      ASSERT_GE(k, 0);
      if (k == 0) race_one(dir, go[0]);
    }
    ASSERT_EQ(write(go[1], "gg", 2), 2);  // both start at once
    close(go[0]);
    close(go[1]);
    int codes[2];
    for (int i = 0; i < 2; ++i) {
      int status = 0;
      ASSERT_EQ(waitpid(kids[i], &status, 0), kids[i]);
      codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::sort(codes, codes + 2);
    EXPECT_EQ(codes[0], 0) << "trial " << trial << ": no winner with its folder intact (exit codes " << codes[0] << ", "
                           << codes[1] << ")";
    EXPECT_EQ(codes[1], 2) << "trial " << trial << ": the other launch was not refused (exit " << codes[1] << ")";
    EXPECT_TRUE(fs::exists(dir + "/results.csv")) << "trial " << trial << ": the winner's results are gone";
  }
}

// The interleaving the race above can only hit by chance, made to happen: this launch creates the
// folder, and before it locks it another launch takes it. The refused launch removes nothing (it
// removed the lock file and the folder it had made, under the winner, before).
TEST(ResultsFolder, ARefusedLaunchRemovesNothingEvenAFolderItCreated) {
  const std::string dir = fresh("created-then-taken");
  ResultsFolder winner;
  FolderRequest loser = request(dir, "ccbench --out loser");
  loser.between_create_and_lock = [&] {
    ASSERT_TRUE(fs::is_directory(dir));  // the loser made it
    winner = prepare_output_dir(request(dir, "ccbench --out winner"));
  };
  const std::string why = usage_error([&] { prepare_output_dir(loser); });
  EXPECT_NE(why.find("is in use by another ccbench launch"), std::string::npos) << why;
  ASSERT_TRUE(fs::exists(dir + "/" + kFolderLockName)) << "the refused launch removed the winner's lock file";
  winner.mark_used();
  std::ofstream(dir + "/results.csv") << "the winner's\n";
  EXPECT_TRUE(std::ifstream(dir + "/results.csv").good()) << "the winner's folder is gone";
  const nlohmann::json holder = nlohmann::json::parse(std::ifstream(dir + "/" + kFolderLockName));
  EXPECT_EQ(holder["command"], "ccbench --out winner");
}

TEST(RunPrepare, AFailureAfterTheFolderWasMadeLeavesNoFolder) {
  RunOptions opts;
  opts.out_dir = fresh("results");
  opts.ceilings_file = fresh("absent-links.json");
  EXPECT_THROW(ccbench::Run(opts).prepare(), Error);
  EXPECT_FALSE(fs::exists(opts.out_dir));
}

}  // namespace
}  // namespace ccbench
