#pragma once
// The value of --overlap KIND[:SIZE] (harness/overlap/overlap.h runs the load it names): what it
// is, how it is spelled and labelled in the rows. Pure; the option layer (options.h) holds one.
#include <cstdint>
#include <string>

namespace ccbench {

enum class LoadKind { none, gemm, membw };

struct OverlapSpec {
  LoadKind kind = LoadKind::none;
  std::uint64_t size = 0;  // gemm: N; membw: bytes per buffer
  int room_sms = 0;        // SMs the load leaves to the collectives (--overlap-room)
};

inline constexpr std::uint64_t kDefaultGemmN = 8192;  // ~1.3 ms per GEMM at 820 TFLOPS (H200)
inline constexpr std::uint64_t kDefaultMembwBytes = 1ull << 30;
// 16 SMs (12 % of an H200's 132) for the collectives beside a load: room for 16 ring channels
// or NCCL with maxCTAs=16; the GEMM alone loses about that share. --overlap-room 0 gives the load
// every SM (the collectives then wait for its blocks to retire).
inline constexpr int kDefaultRoomSms = 16;
inline constexpr int kMaxRoomSms = 1024;  // checked against the GPU's SMs at run time

// "gemm", "gemm:16384", "membw", "membw:2G", "" (none). Throws Error(usage) saying what is valid:
// gemm N from 256 to 65536, a multiple of 64; membw from 1 MiB to 64 GiB, a multiple of 16.
// The room is kDefaultRoomSms.
OverlapSpec parse_overlap(const std::string& text);
// What --overlap takes, for its help, the reference and parse_overlap's messages.
std::string overlap_valid();
// "gemm bf16 8192x8192x8192", "membw 1G", with ", 16 SMs left" where room_sms > 0; "" for none.
std::string load_label(const OverlapSpec& s);
// "TFLOPS" or "GB/s".
const char* load_unit(const OverlapSpec& s);
// The work of one launch in load_unit() x 1e-6 s: TFLOP for gemm (2 N^3 / 1e12), GB for membw
// (2 S / 1e9), so work / seconds is the unit.
double load_work(const OverlapSpec& s);

}  // namespace ccbench
