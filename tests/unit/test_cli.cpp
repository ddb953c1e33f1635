// The size parser, the size sweep and the command line: valid forms parse to what nccl-tests
// users expect; invalid ones throw Error(usage) with a message naming the flag.
#include <gtest/gtest.h>

#include "core/build_config.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/knob_table.h"
#include "harness/app/cli.h"
#include "harness/engine/sizes.h"
#include "tests/unit/cli_parse.h"

namespace ccbench {
namespace {

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

// The ib knobs of `run` (CPU ranks' ib and GPU ranks' net/ib), shared with `links`.
TEST(CommandLine, RunTakesTheIbKnobsAndGpudirect) {
  auto o = std::get<RunOptions>(parse({}));
  EXPECT_TRUE(o.ib.gpudirect);
  EXPECT_EQ(o.ib.qps_per_peer, 1);
  o = std::get<RunOptions>(parse({"--transport", "ib", "--gpudirect", "off", "--ib-qps", "4", "--ib-chunk", "64K",
                                  "--ib-dev", "mlx5_1:2", "--gid-index", "3", "--ib-mtu", "2048", "--ib-tc", "106",
                                  "--ib-sl", "5"}));
  EXPECT_FALSE(o.ib.gpudirect);
  EXPECT_EQ(o.ib.qps_per_peer, 4);
  EXPECT_EQ(o.ib.chunk_bytes, 64u << 10);
  EXPECT_EQ(o.ib.device, "mlx5_1");
  EXPECT_EQ(o.ib.port, 2);
  EXPECT_EQ(o.ib.gid_index, 3);
  EXPECT_EQ(o.ib.mtu, 2048);
  EXPECT_EQ(o.ib.traffic_class, 106);
  EXPECT_EQ(o.ib.service_level, 5);
  expect_usage_error({"--gpudirect", "maybe"}, "--gpudirect: unknown value 'maybe' (valid: on, off)");
#if CCBENCH_HAVE_NCCL
  // --nccl-library: a path that is no file is refused before anything starts (a name alone is
  // left to the dynamic linker; a library that cannot be loaded skips the NCCL rows with why).
  expect_usage_error({"--nccl-library", "/nonexistent/libnccl.so.2"},
                     "--nccl-library: '/nonexistent/libnccl.so.2' is no file");
#else
  expect_usage_error({"--nccl-library", "libnccl.so.2"}, "this ccbench was built without NCCL");
#endif
  expect_usage_error({"--ib-qps", "17"}, "--ib-qps: '17' is not valid");
  expect_usage_error({"--ib-chunk", "1K"}, "--ib-chunk");
  expect_usage_error({"links", "--gpudirect", "off"}, "--gpudirect");  // links measures CPU ranks over ib only
}

// The ofi knobs, shared by `run` and `links`; where GPU ranks' FIFO slots live follows --gpudirect.
TEST(CommandLine, RunAndLinksTakeTheOfiKnobs) {
  auto o = std::get<RunOptions>(parse({}));
  EXPECT_EQ(o.ofi.provider, "");
  EXPECT_EQ(o.ofi.domain, "");
  EXPECT_EQ(o.ofi.protocol, OfiProtocol::automatic);
  EXPECT_TRUE(o.ofi.hmem);
  o = std::get<RunOptions>(parse({"--transport", "ofi", "--ofi-provider", "tcp;ofi_rxm", "--ofi-domain", "lo",
                                  "--ofi-protocol", "tagged", "--gpudirect", "off"}));
  EXPECT_EQ(o.transport, "ofi");
  EXPECT_EQ(o.ofi.provider, "tcp;ofi_rxm");
  EXPECT_EQ(o.ofi.domain, "lo");
  EXPECT_EQ(o.ofi.protocol, OfiProtocol::tagged);
  EXPECT_FALSE(o.ofi.hmem);
  const auto l = std::get<LinksOptions>(parse({"links", "--transport", "ofi,tcp", "--ofi-provider", "shm",
                                               "--ofi-protocol", "rma"}));
  EXPECT_EQ(l.transports, (std::vector<Transport>{Transport::ofi, Transport::tcp}));
  EXPECT_EQ(l.ofi.provider, "shm");
  EXPECT_EQ(l.ofi.protocol, OfiProtocol::rma);
  expect_usage_error({"--ofi-protocol", "rdma"}, "--ofi-protocol: unknown value 'rdma' (valid: auto, rma, tagged)");
  expect_usage_error({"--ofi-provider", ""}, "--ofi-provider: empty provider name");
  expect_usage_error({"--ofi-provider", "tcp, shm"}, "--ofi-provider: 'tcp, shm' is not a libfabric provider name");
  expect_usage_error({"links", "--ofi-domain", "lo eth0"}, "--ofi-domain: 'lo eth0' is not a libfabric domain name");
  expect_usage_error({"--transport", "ofi,tcp"}, "one transport per launch");
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
  expect_usage_error({"-b", "8", "-e", "1M", "-f", "1"}, "-f/--stepfactor: '1' is not valid; expected a factor above 1");
  expect_usage_error({"-f", "2", "-i", "8"}, "exclude each other");
  expect_usage_error({"-i", "0"}, "never advances");
  expect_usage_error({"-n", "0"}, "-n/--iters");
  expect_usage_error({"-n", "x"}, "-n/--iters");
  expect_usage_error({"-w", "-1"}, "-w/--warmup_iters");
  expect_usage_error({"-c", "-1"}, "-c/--check");
  expect_usage_error({"-d", "float128"}, "valid: int8");
  expect_usage_error({"-o", "xor"}, "valid: sum");
  expect_usage_error({"--collective", "alltoallw"}, "valid: allreduce");
  expect_usage_error({"--impl", "magic"}, "valid: mpi");
  expect_usage_error({"--device", "tpu"}, "valid: auto, cpu, gpu");
  expect_usage_error({"--transport", "pigeon"}, "valid: auto");
  expect_usage_error({"--in-place", "maybe"}, "valid: yes, no, both");
  expect_usage_error({"--format", "xml"}, "valid: table");
  expect_usage_error({"--timeout", "-0.5"}, "--timeout");
  expect_usage_error({"--cycles", "-2"}, "--cycles");
  expect_usage_error({"--baseline", "foo"}, "--baseline");
  expect_usage_error({"--frobnicate"}, "see ccbench --help");
  expect_usage_error({"compare", "a.csv", "b.csv", "--tolerance", "2"}, "--tolerance");
  // A single option given twice is refused in our words, the values named, whichever its kind.
  expect_usage_error({"-b", "1K", "-b", "2K"}, "-b/--minbytes: given 2 times ('1K', '2K'); give it once");
  expect_usage_error({"--collective", "allreduce", "--collective", "allgather"}, "--collective: given 2 times");
  expect_usage_error({"-n", "5", "--iters", "5"}, "-n/--iters: given 2 times ('5', '5')");
  expect_usage_error({"compare", "a.csv", "b.csv", "--tolerance", "0.1", "--tolerance", "0.2"},
                     "--tolerance: given 2 times ('0.1', '0.2')");
}

TEST(CommandLine, RepeatableOptionsKeepEveryValue) {
  auto h = std::get<HistoryRequest>(parse({"history", "--db", "h.db", "--add", "a", "--add", "b", "c"}));
  EXPECT_EQ(h.add, (std::vector<std::string>{"a", "b", "c"}));
  auto c = std::get<CompareRequest>(parse({"compare", "r", "--pair", "impl=ring:nccl", "--pair", "transport=tcp:shm"}));
  EXPECT_EQ(c.options.pairs.size(), 2u);
}

// Command lines as nccl-tests' README and users' scripts have them (all_reduce_perf ... ), split
// as a shell would.
RunOptions parse_line(const std::string& line) {
  std::vector<std::string> args;
  std::istringstream in(line);
  for (std::string a; in >> a;) args.push_back(a);
  return std::get<RunOptions>(parse(args));
}

TEST(NcclTestsCommandLines, ReadmeExamplesRunUnchanged) {
  // mpirun -np 64 -N 8 ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
  RunOptions o = parse_line("-b 8 -e 8G -f 2 -g 1");
  EXPECT_EQ(o.sweep.min_bytes, 8u);
  EXPECT_EQ(o.sweep.max_bytes, 8ull << 30);
  EXPECT_EQ(o.sweep.factor, 2.0);
  EXPECT_TRUE(o.max_given);
  o = parse_line("-b 8 -e 128M -f 2 -g 1");
  EXPECT_EQ(o.sweep.max_bytes, 128u << 20);
  // The single-GPU example asks for 8 GPUs in one process: refused, saying how to get them.
  expect_usage_error({"-b", "8", "-e", "128M", "-f", "2", "-g", "8"}, "-g/--ngpus 8: ccbench runs one thread and one GPU per process");
  expect_usage_error({"-g", "2"}, "start more MPI ranks (mpirun -np N");
  expect_usage_error({"-t", "4"}, "-t/--nthreads 4");
}

TEST(NcclTestsCommandLines, EveryFlagOfTheirUsageText) {
  RunOptions o = parse_line(
      "-t 1 -g 1 -b 1K -e 1M -i 1K -n 30 -m 2 -w 3 -N 2 -p 1 -c 5 -o max -d int32 -r 1 -z 0 -y 0 -T 30 -G 2 -C 0 "
      "-S 0 -J run-copy.json -a 2 -R 0 -D 0 -M 0 -u 3 -I 1 -K 2");
  EXPECT_EQ(o.sweep.increment, 1024u);
  EXPECT_EQ(o.iterations, 30);
  EXPECT_EQ(o.agg_iters, 2);
  EXPECT_EQ(o.warmup, 3 + 2);  // -K 2: two more warm-up iterations
  EXPECT_EQ(o.cycles, 2);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.ops, std::vector<ReduceOp>{ReduceOp::max});
  EXPECT_EQ(o.dtypes, std::vector<DataType>{DataType::int32});
  EXPECT_EQ(o.root, 1);
  EXPECT_EQ(o.timeout, std::chrono::seconds(30));
  EXPECT_EQ(o.graph_launches, 2);
  EXPECT_EQ(o.json_file, "run-copy.json");
  EXPECT_EQ(o.rank_time, RankTime::min);
  EXPECT_EQ(o.misalign, 3);
  EXPECT_FALSE(o.nccl_symmetric);
  // What the flags mean here is said: -p 1, -c 5, -I 1, -K 2.
  std::string notes;
  for (const auto& n : o.notes) notes += n + "\n";
  EXPECT_NE(notes.find("-p/--parallel_init 1: one thread per process"), std::string::npos) << notes;
  EXPECT_NE(notes.find("-c 5: ccbench checks every timed iteration"), std::string::npos) << notes;
  EXPECT_NE(notes.find("-I/--per_iter_timing 1: ccbench always times single iterations"), std::string::npos) << notes;
  EXPECT_NE(notes.find("-K/--per_iter_skip 2: 2 more warm-up iterations"), std::string::npos) << notes;
}

TEST(NcclTestsCommandLines, LongNamesAndAttachedValues) {
  RunOptions o = parse_line("--minbytes=64 --maxbytes 4K --stepfactor=4 --run_cycles 3 --average 0 --unalign=1 "
                            "--check 0 --timeout 0");
  EXPECT_EQ(o.sweep.min_bytes, 64u);
  EXPECT_EQ(o.sweep.max_bytes, 4096u);
  EXPECT_EQ(o.sweep.factor, 4.0);
  EXPECT_EQ(o.cycles, 3);
  EXPECT_EQ(o.rank_time, RankTime::rank0);
  EXPECT_EQ(o.misalign, 1);
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.timeout, std::chrono::seconds(7 * 24 * 3600));  // -T 0: no timeout in nccl-tests; a week here
  o = parse_line("-b8 -e1M -n010");
  EXPECT_EQ(o.sweep.min_bytes, 8u);
  EXPECT_EQ(o.sweep.max_bytes, 1u << 20);
  EXPECT_EQ(o.iterations, 10);  // decimal, never octal
  EXPECT_EQ(parse_line("").rank_time, RankTime::max);  // the slowest rank by default
}

// -m N: N collectives per timed iteration, 1 to 1024.
TEST(NcclTestsCommandLines, AggregatedIterations) {
  EXPECT_EQ(parse_line("").agg_iters, 1);
  EXPECT_EQ(parse_line("-m 1").agg_iters, 1);
  // all_reduce_perf -b 8 -e 128M -f 2 -g 1 -m 8, as users aggregate small collectives.
  RunOptions o = parse_line("-b 8 -e 128M -f 2 -g 1 -m 8");
  EXPECT_EQ(o.agg_iters, 8);
  EXPECT_EQ(o.sweep.max_bytes, 128u << 20);
  EXPECT_EQ(parse_line("--agg_iters=1024").agg_iters, 1024);
  EXPECT_EQ(parse_line("-m4").agg_iters, 4);
  expect_usage_error({"-m", "0"}, "-m/--agg_iters: '0' is not valid; expected a whole number from 1 to 1024");
  expect_usage_error({"-m", "1025"}, "from 1 to 1024");
  expect_usage_error({"-m", "x"}, "from 1 to 1024");
}

TEST(NcclTestsCommandLines, RegisteredBuffersSelectNcclSymm) {
  RunOptions o = parse_line("-R 2");
  EXPECT_TRUE(o.nccl_symmetric);
  EXPECT_EQ(o.impls, std::vector<std::string>{"default"});  // the default list gets nccl-symm (app)
  o = parse_line("-R 2 --impl nccl,ring");
  EXPECT_EQ(o.impls, (std::vector<std::string>{"nccl-symm", "ring"}));
  expect_usage_error({"-R", "2", "--impl", "ring"}, "names no nccl");
  expect_usage_error({"-R", "1"}, "ncclCommRegister are not offered; -R 2");
  expect_usage_error({"-R", "3"}, "-R/--local_register: '3' is not valid");
}

TEST(NcclTestsCommandLines, FlagsWithNoMeaningHereSayWhatToUse) {
  expect_usage_error({"-z", "2"}, "-z/--blocking: '2' is not valid; expected a whole number from 0 to 1");
  expect_usage_error({"-a", "4"}, "-a/--average: '4' is not valid");
  expect_usage_error({"-C", "1"}, "device time (CUDA events)");
  expect_usage_error({"-S", "1"}, "context.started_utc");
  expect_usage_error({"-M", "1"}, "ccbench topo");
  expect_usage_error({"-y", "1"}, "default stream is not offered");
  expect_usage_error({"-x", "1"}, "NCCL_CTA_POLICY=1");
  expect_usage_error({"-D", "1"}, "--impl ring,tree,oneshot,twoshot,ce");
  expect_usage_error({"-V", "16"}, "CCBENCH_GPU_CHANNELS");
  expect_usage_error({"-J", "out.txt"}, "does not end in .json");
  expect_usage_error({"-I", "2"}, "-I/--per_iter_timing: '2' is not valid");
  expect_usage_error({"-u", "-1"}, "-u/--unalign");
  expect_usage_error({"-g", "1", "--frobnicate", "3"}, "unknown argument(s): --frobnicate 3");
  expect_usage_error({"--sweep-env", "NCCL_PROTO=LL,Simple"}, "run scripts/sweep.py --sweep-env NAME=v1,v2,...");
  expect_usage_error({"tune", "--budget", "5"}, "tune: run scripts/tune.py --space FILE.yaml --budget MINUTES");
}

TEST(NcclTestsCommandLines, Environment) {
  ::setenv("NCCL_TESTS_MIN_BW", "250.5", 1);
  EXPECT_EQ(parse_line("-g 1").min_busbw_gbps, 250.5);
  ::setenv("NCCL_TESTS_MIN_BW", "fast", 1);
  expect_usage_error({}, "NCCL_TESTS_MIN_BW='fast' is not valid");
  ::unsetenv("NCCL_TESTS_MIN_BW");
  ::setenv("NCCL_TESTS_SPLIT", "AND 0x7", 1);
  expect_usage_error({}, "NCCL_TESTS_SPLIT='AND 0x7': nccl-tests' sub-groups by a bit mask of rank numbers are not taken");
  ::unsetenv("NCCL_TESTS_SPLIT");
  ::setenv("NCCL_TESTS_SPLIT_MASK", "0x7", 1);
  expect_usage_error({}, "NCCL_TESTS_SPLIT_MASK='0x7'");
  ::unsetenv("NCCL_TESTS_SPLIT_MASK");
}

TEST(CommandLine, HelpShowsTheRunOptionsWithTheirTypes) {
  const std::string help = std::get<HelpRequest>(parse({"--help"})).text;
  for (const char* text : {"-b,--minbytes SIZE", "-n,--iters INT", "--collective LIST", "--device NAME",
                           "-T,--timeout SECONDS", "-J,--output_file PATH", "nccl-tests flags", "-g,--ngpus INT"})
    EXPECT_NE(help.find(text), std::string::npos) << text << " not in:\n" << help;
}

// Every CCBENCH_* variable of the knob table, with its default, and the value this process has.
TEST(CommandLine, HelpEnvironmentListsEveryKnobAndWhatIsSet) {
  ::setenv("CCBENCH_GPU_NET_THREADS", "12", 1);
  const std::string help = std::get<HelpRequest>(parse({"help", "--environment"})).text;
  ::unsetenv("CCBENCH_GPU_NET_THREADS");
  for (const KnobRow& row : kKnobTable) EXPECT_NE(help.find("\n" + std::string(row.name)), std::string::npos) << row.name;
  for (const char* text : {"CCBENCH_GPU_NET_THREADS  (every rank must have the same)\n  set here  12\n  takes     an "
                           "integer from 1 to 64\n  default   8\n",
                           "CCBENCH_TCP_IF\n  takes     an interface name\n"})
    EXPECT_NE(help.find(text), std::string::npos) << text << " not in:\n" << help;
}

}  // namespace
}  // namespace ccbench
