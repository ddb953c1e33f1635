// The tcp transport's choice of interface where the host name does not give one: the interface
// on the route to the peers (transports/tcp.h tcp_route_address), and the address lists ranks
// exchange for it.
#include <gtest/gtest.h>

#include "transports/tcp.h"

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
  EXPECT_EQ(tcp_route_address(two, {{{"mgmt", "192.168.5.1", 24}, {"data", "10.20.1.1", 16}},
                                    {{"data", "10.20.7.9", 16}}}),
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

}  // namespace
}  // namespace ccbench
