// The tcp transport's protocol without its sockets (transports/cpu/tcp_wire.h): the messages as
// they go on the wire, the receiver's and the sender's checks of what arrives, and the choice of
// interface where the host name does not give one (the interface on the route to the peers, and
// the address lists ranks exchange for it).
#include <cstring>

#include <gtest/gtest.h>

#include "transports/cpu/tcp_wire.h"

namespace ccbench {
namespace {

using Addresses = std::vector<TcpInterfaceAddress>;

TEST(TcpAddress, ListsRoundTripAndSkipWhatIsNotAnAddress) {
  const Addresses a = {{"eth0", "198.18.0.2", 24}, {"ib0", "10.1.0.2", 16}};
  const std::string text = tcp_format_addresses(a);
  EXPECT_EQ(text, "eth0=198.18.0.2/24 ib0=10.1.0.2/16");
  const Addresses back = tcp_parse_addresses(text);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].interface, "ib0");
  EXPECT_EQ(back[1].address, "10.1.0.2");
  EXPECT_EQ(back[1].prefix, 16);
  // A name without an address, a prefix out of range, a host name, an IPv6 address: skipped.
  EXPECT_TRUE(tcp_parse_addresses("eth0 eth1=10.0.0.1/33 eth2=h2/24 eth3=fe80::1/64").empty());
  EXPECT_TRUE(tcp_parse_addresses("").empty());
}

TEST(TcpAddress, TheInterfaceOnEveryPeersSubnet) {
  // Three hosts of a cluster in a box: eth0 of each on 198.18.0.0/24.
  const Addresses mine = {{"eth0", "198.18.0.2", 24}};
  EXPECT_EQ(tcp_route_address(mine, {{{"eth0", "198.18.0.1", 24}}, {{"eth0", "198.18.0.3", 24}}}), "198.18.0.2");
  // A management network reaching one peer only comes first: the data network that reaches
  // both is chosen.
  const Addresses two = {{"mgmt", "192.168.5.2", 24}, {"data", "10.20.0.2", 16}};
  EXPECT_EQ(
      tcp_route_address(two, {{{"mgmt", "192.168.5.1", 24}, {"data", "10.20.1.1", 16}}, {{"data", "10.20.7.9", 16}}}),
      "10.20.0.2");
}

TEST(TcpAddress, ABridgeEveryHostHasAlikeJoinsNoHosts) {
  // docker0 is 172.17.0.1/16 on every host: the same address on both sides is no route.
  const Addresses mine = {{"docker0", "172.17.0.1", 16}, {"eth0", "10.0.0.2", 24}};
  EXPECT_EQ(tcp_route_address(mine, {{{"docker0", "172.17.0.1", 16}, {"eth0", "10.0.0.1", 24}}}), "10.0.0.2");
  // And where only the bridge would match, there is no route.
  EXPECT_EQ(tcp_route_address({{"docker0", "172.17.0.1", 16}}, {{{"docker0", "172.17.0.1", 16}}}), "");
}

TEST(TcpAddress, NoSharedSubnetGivesNothing) {
  EXPECT_EQ(tcp_route_address({{"eth0", "10.0.0.2", 24}}, {{{"eth0", "10.0.1.1", 24}}}), "");
  EXPECT_EQ(tcp_route_address({}, {{{"eth0", "10.0.1.1", 24}}}), "");
  // A peer host with no address at all cannot be reached.
  EXPECT_EQ(tcp_route_address({{"eth0", "10.0.0.2", 24}}, {{{"eth0", "10.0.0.1", 24}}, {}}), "");
}

// The bytes of each message, as a peer built by hand must send them (little-endian).
TEST(TcpWire, MessagesHaveTheDocumentedBytes) {
  const auto h = tcp_data_header(7, 0x0102030405060708ull, 256);
  const unsigned char header[kTcpHeaderBytes] = {7, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5,
                                                 4, 3, 2, 1, 0, 1, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(h.data(), header, kTcpHeaderBytes), 0);
  const auto c = tcp_credit(7, 3);
  const unsigned char credit[kTcpCreditBytes] = {7, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(c.data(), credit, kTcpCreditBytes), 0);
  TcpToken token{};
  for (std::size_t i = 0; i < token.size(); ++i) token[i] = static_cast<std::uint8_t>(i * 17 + 1);
  const TcpHello hello = tcp_hello(token, 3, 7, 1 << 18, 4);
  unsigned char raw[sizeof(TcpHello)];
  std::memcpy(raw, &hello, sizeof raw);
  EXPECT_EQ(std::memcmp(raw, "ccchtcp1", 8), 0);  // the magic, little-endian, reads as text
  const TcpHelloFields f = tcp_hello_fields(hello);
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.tag, 7);
  EXPECT_EQ(f.slot_bytes, 1u << 18);
  EXPECT_EQ(f.depth, 4u);
}

TEST(TcpWire, AHelloIsTakenOnlyWithTheMagicAndTheJobToken) {
  TcpToken token{};
  token[5] = 9;
  TcpHello hello = tcp_hello(token, 1, 2, 4096, 2);
  EXPECT_TRUE(tcp_hello_has_token(hello, token));
  TcpToken other = token;
  other[15] ^= 1;  // one bit of the last byte
  EXPECT_FALSE(tcp_hello_has_token(hello, other));
  hello.magic ^= 1;
  EXPECT_FALSE(tcp_hello_has_token(hello, token));
}

TEST(TcpWire, TheReceiverRefusesEveryMalformedHeader) {
  std::uint64_t len = 0;
  auto problem = [&](int tag, std::uint64_t seq, std::uint64_t length, std::uint64_t buffer) {
    const auto h = tcp_data_header(tag, seq, length);
    return tcp_data_header_problem(h.data(), 5, 2, 4096, buffer, &len);
  };
  EXPECT_FALSE(problem(5, 2, 4096, 0));
  EXPECT_EQ(len, 4096u);
  EXPECT_FALSE(problem(5, 2, 0, 0));  // an empty slot is a slot
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(problem(6, 2, 8, 0).value_or(""), "a header of kind 0 for tag 6 on the channel of tag 5");
  EXPECT_EQ(problem(5, 3, 8, 0).value_or(""), "slot number 3 where 2 was due");
  EXPECT_EQ(problem(5, 2, 4097, 0).value_or(""), "a slot of 4097 bytes; slots hold 4096");
  EXPECT_EQ(problem(5, 2, 100, 64).value_or(""), "a slot of 100 bytes for a buffer of 64");
  // A credit where a header was due: the kind gives it away.
  const auto c = tcp_credit(5, 2);
  unsigned char mixed[kTcpHeaderBytes] = {};
  std::memcpy(mixed, c.data(), kTcpCreditBytes);
  EXPECT_EQ(tcp_data_header_problem(mixed, 5, 2, 4096, 0, &len).value_or(""),
            "a header of kind 1 for tag 5 on the channel of tag 5");
}

TEST(TcpWire, TheSenderRefusesCreditsItCannotHaveEarned) {
  std::uint64_t released = 0;
  auto problem = [&](int tag, std::uint64_t n) {
    const auto c = tcp_credit(tag, n);
    return tcp_credit_problem(c.data(), 4, 2, 6, &released);  // 2 released so far, 6 written
  };
  EXPECT_FALSE(problem(4, 2));  // no news is a credit too
  EXPECT_FALSE(problem(4, 6));
  EXPECT_EQ(released, 6u);
  EXPECT_EQ(problem(4, 1).value_or(""), "a credit for 1 released slots after 2, with 6 sent");
  EXPECT_EQ(problem(4, 7).value_or(""), "a credit for 7 released slots after 2, with 6 sent");
  EXPECT_EQ(problem(3, 4).value_or(""), "a message of kind 1 for tag 3 where credits were due");
  const auto h = tcp_data_header(4, 0, 0);
  EXPECT_EQ(tcp_credit_problem(h.data(), 4, 2, 6, &released).value_or(""),
            "a message of kind 0 for tag 4 where credits were due");
}

}  // namespace
}  // namespace ccbench
