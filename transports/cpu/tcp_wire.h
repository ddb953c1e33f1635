#pragma once
// The tcp transport's protocol without its sockets (pure: unit-tested like ib_logic): the wire
// format of transports/cpu/tcp.h, every check a received message must pass, and the address lists
// ranks exchange to find the interface on the route to their peers.
//
// Wire format (little-endian):
//   sender -> receiver   TcpHello once: magic, 128-bit job token, sender rank, channel tag,
//                        geometry; then per slot: a data header {tag, 0, sequence number,
//                        length} + payload.
//   receiver -> sender   a credit {tag, 1, slots released so far}.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccbench {

using TcpToken = std::array<std::uint8_t, 16>;

inline constexpr std::uint64_t kTcpHelloMagic = 0x3170637468636363ull;  // "ccchtcp1"
inline constexpr std::size_t kTcpHeaderBytes = 24;  // tag u32, kind u32 (0), sequence number u64, length u64
inline constexpr std::size_t kTcpCreditBytes = 16;  // tag u32, kind u32 (1), slots released so far u64
inline constexpr std::uint32_t kTcpDataKind = 0, kTcpCreditKind = 1;

struct TcpHello {  // the sender's first message on a connection, as it goes on the wire
  std::uint64_t magic;
  std::uint8_t token[16];
  std::int32_t rank;  // the sender
  std::int32_t tag;
  std::uint64_t slot_bytes;
  std::uint32_t depth;
  std::uint32_t reserved;
};
static_assert(sizeof(TcpHello) == 48);

// The messages as they go on the wire.
TcpHello tcp_hello(const TcpToken& token, int rank, int tag, std::size_t slot_bytes, int depth);
std::array<unsigned char, kTcpHeaderBytes> tcp_data_header(int tag, std::uint64_t seq, std::uint64_t length);
std::array<unsigned char, kTcpCreditBytes> tcp_credit(int tag, std::uint64_t released);

// A hello's fields in host order.
struct TcpHelloFields {
  int rank = 0;
  int tag = 0;
  std::uint64_t slot_bytes = 0;
  std::uint32_t depth = 0;
};
TcpHelloFields tcp_hello_fields(const TcpHello& h);
// Whether a hello carries the magic and the job's token (compared in constant time: how long it
// takes says nothing about where a guess differs).
bool tcp_hello_has_token(const TcpHello& h, const TcpToken& token);

// The receiver's checks of a data header due as slot `due` on the channel of `tag`: the message
// is the reason it is malformed ("slot number 5 where 4 was due"), else nullopt and `*length`
// set. `buffer_bytes` is the caller's buffer where the payload goes straight there (zero-copy
// ends), 0 otherwise.
std::optional<std::string> tcp_data_header_problem(const unsigned char* header, int tag, std::uint64_t due,
                                                   std::uint64_t slot_bytes, std::uint64_t buffer_bytes,
                                                   std::uint64_t* length);
// The sender's checks of a credit on the channel of `tag`, having `credited` slots released
// already and `written` slots sent: the reason it is malformed, else nullopt and `*released` set.
std::optional<std::string> tcp_credit_problem(const unsigned char* credit, int tag, std::uint64_t credited,
                                              std::uint64_t written, std::uint64_t* released);

// An IPv4 address of one of this host's interfaces, with its prefix length.
struct TcpInterfaceAddress {
  std::string interface;  // "eth0"
  std::string address;    // numeric, "198.18.0.2"
  int prefix = 32;        // 24 for a /24
};
// "eth0=198.18.0.2/24 ib0=10.1.0.2/16" and back: how ranks tell each other their addresses.
// Parsing skips what is not such an item.
std::string tcp_format_addresses(const std::vector<TcpInterfaceAddress>& addresses);
std::vector<TcpInterfaceAddress> tcp_parse_addresses(const std::string& text);
// The interface on the route to the peers: of `mine`, the first address whose subnet holds an
// address of every host in `others` (each host's addresses); "" when none does. An address of
// another host equal to one of `mine` counts for nothing: a bridge every host has alike (docker0's
// 172.17.0.1) joins no two hosts.
std::string tcp_route_address(const std::vector<TcpInterfaceAddress>& mine,
                              const std::vector<std::vector<TcpInterfaceAddress>>& others);

}  // namespace ccbench
