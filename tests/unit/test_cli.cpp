// The size parser, the size sweep and the command line: valid forms parse to what nccl-tests
// users expect; invalid ones throw Error(usage) with a message naming the flag.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/sizes.h"
#include "results/error.h"

namespace ccbench {
namespace {

Command parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ccbench");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// The exit code and message of a command line that must be rejected.
void expect_usage_error(std::vector<std::string> args, const std::string& text) {
  try {
    parse(args);
    ADD_FAILURE() << "accepted: " << testing::PrintToString(args);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << "message: " << e.what();
  }
}

TEST(Sizes, BinarySuffixes) {
  EXPECT_EQ(parse_size("8", "-b"), 8u);
  EXPECT_EQ(parse_size("64K", "-b"), 64u << 10);
  EXPECT_EQ(parse_size("64k", "-b"), 64u << 10);
  EXPECT_EQ(parse_size("1M", "-b"), 1u << 20);
  EXPECT_EQ(parse_size("2G", "-b"), 2ull << 30);
  EXPECT_EQ(parse_size("1T", "-b"), 1ull << 40);
  EXPECT_EQ(parse_size("3KiB", "-b"), 3u << 10);
  EXPECT_EQ(parse_size("5MB", "-b"), 5u << 20);
  EXPECT_EQ(parse_size("0", "-b"), 0u);
}

TEST(Sizes, RejectsBadForms) {
  for (const char* bad : {"", "-1", "abc", "1.5K", "1Q", "K", "1KK", "18446744073709551616", "20000000T", " 8"}) {
    try {
      parse_size(bad, "-e/--maxbytes");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      EXPECT_NE(std::string(e.what()).find("-e/--maxbytes"), std::string::npos) << e.what();
    }
  }
}

TEST(Sizes, FormatRoundTrips) {
  for (std::uint64_t v : {1ull, 8ull, 1000ull, 1024ull, 3ull << 20, 1ull << 30, (1ull << 40) + 1})
    EXPECT_EQ(parse_size(format_size(v), "x"), v);
  EXPECT_EQ(format_size(64 << 10), "64K");
}

TEST(Sweep, FactorAndIncrement) {
  EXPECT_EQ(sweep_sizes({8, 64, 2.0, 0}), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(sweep_sizes({8, 100, 4.0, 0}), (std::vector<std::uint64_t>{8, 32}));
  EXPECT_EQ(sweep_sizes({10, 40, 2.0, 10}), (std::vector<std::uint64_t>{10, 20, 30, 40}));
  EXPECT_EQ(sweep_sizes({5, 5, 1.0, 0}), (std::vector<std::uint64_t>{5}));
  // A factor that rounds down to the same size still advances by one byte.
  EXPECT_EQ(sweep_sizes({1, 3, 1.5, 0}), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(Sweep, RejectsEmptyOrStuckSweeps) {
  EXPECT_THROW(sweep_sizes({0, 8, 2.0, 0}), Error);
  EXPECT_THROW(sweep_sizes({16, 8, 2.0, 0}), Error);
  EXPECT_THROW(sweep_sizes({8, 16, 1.0, 0}), Error);
  EXPECT_THROW(sweep_sizes({8, 16, 0.5, 0}), Error);
  EXPECT_THROW(sweep_sizes({1, 1ull << 40, 1.0000001, 0}), Error);  // more than 10000 sizes
}

TEST(CommandLine, DefaultsAreNcclTestsLike) {
  auto o = std::get<RunOptions>(parse({}));
  EXPECT_EQ(o.sweep.min_bytes, 8u);
  EXPECT_FALSE(o.max_given);
  EXPECT_EQ(o.iterations, 20);
  EXPECT_EQ(o.warmup, 5);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.collectives, (std::vector<Collective>{Collective::allreduce, Collective::allgather}));
  EXPECT_EQ(o.dtypes, std::vector<DataType>{DataType::float32});
  EXPECT_EQ(o.impls, std::vector<std::string>{"default"});
  EXPECT_EQ(o.in_place, InPlaceChoice::both);
}

TEST(CommandLine, ShortFlags) {
  auto o = std::get<RunOptions>(parse({"-b", "1K", "-e", "1M", "-f", "4", "-n", "7", "-w", "2", "-c", "0", "-d",
                                       "half,bf16", "-o", "all", "-G", "3", "-r", "1"}));
  EXPECT_EQ(o.sweep.min_bytes, 1024u);
  EXPECT_EQ(o.sweep.max_bytes, 1u << 20);
  EXPECT_EQ(o.sweep.factor, 4.0);
  EXPECT_EQ(o.iterations, 7);
  EXPECT_EQ(o.warmup, 2);
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.dtypes, (std::vector<DataType>{DataType::float16, DataType::bfloat16}));
  EXPECT_EQ(o.ops.size(), 5u);
  EXPECT_EQ(o.graph_launches, 3);
  EXPECT_EQ(o.root, 1);
}

TEST(CommandLine, SubcommandsAndRunIsDefault) {
  EXPECT_TRUE(std::holds_alternative<RunOptions>(parse({"run", "-n", "3"})));
  EXPECT_TRUE(std::holds_alternative<RunOptions>(parse({"-n", "3"})));
  EXPECT_TRUE(std::holds_alternative<VersionRequest>(parse({"--version"})));
  EXPECT_TRUE(std::holds_alternative<ListRequest>(parse({"list"})));
  EXPECT_TRUE(std::holds_alternative<TopoRequest>(parse({"topo"})));
  EXPECT_TRUE(std::holds_alternative<HelpRequest>(parse({"--help"})));
  auto c = std::get<CompareRequest>(parse({"compare", "a.csv", "b.csv", "--tolerance", "0.1"}));
  EXPECT_EQ(c.runs, (std::vector<std::string>{"a.csv", "b.csv"}));
  EXPECT_EQ(c.options.tolerance, 0.1);
}

TEST(CommandLine, RejectsBadInputWithAMessageSayingWhatIsValid) {
  expect_usage_error({"-b", "0"}, "at least 1 byte");
  expect_usage_error({"-b", "2M", "-e", "1M"}, "larger than");
  expect_usage_error({"-b", "8", "-e", "1M", "-f", "1"}, "never advances");
  expect_usage_error({"-f", "2", "-i", "8"}, "exclude each other");
  expect_usage_error({"-i", "0"}, "never advances");
  expect_usage_error({"-n", "0"}, "-n/--iters");
  expect_usage_error({"-n", "x"}, "-n/--iters");
  expect_usage_error({"-w", "-1"}, "-w/--warmup_iters");
  expect_usage_error({"-c", "2"}, "0 (off) or 1 (on)");
  expect_usage_error({"-d", "float128"}, "valid: int8");
  expect_usage_error({"-o", "xor"}, "valid: sum");
  expect_usage_error({"--collective", "alltoallw"}, "valid: allreduce");
  expect_usage_error({"--impl", "magic"}, "valid: mpi");
  expect_usage_error({"--device", "tpu"}, "valid: auto, cpu, gpu");
  expect_usage_error({"--transport", "pigeon"}, "valid: auto");
  expect_usage_error({"--in-place", "maybe"}, "valid: yes, no, both");
  expect_usage_error({"--format", "xml"}, "valid: table");
  expect_usage_error({"--timeout", "0"}, "--timeout");
  expect_usage_error({"--cycles", "-2"}, "--cycles");
  expect_usage_error({"--baseline", "foo"}, "--baseline");
  expect_usage_error({"--frobnicate"}, "see ccbench --help");
  expect_usage_error({"compare", "a.csv", "b.csv", "--tolerance", "2"}, "--tolerance");
}

}  // namespace
}  // namespace ccbench
