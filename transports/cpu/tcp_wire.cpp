#include "transports/cpu/tcp_wire.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>

#include <fmt/format.h>

namespace ccbench {

namespace {

void put32(unsigned char* p, std::uint32_t v) {
  v = htole32(v);
  std::memcpy(p, &v, 4);
}
void put64(unsigned char* p, std::uint64_t v) {
  v = htole64(v);
  std::memcpy(p, &v, 8);
}
std::uint32_t get32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return le32toh(v);
}
std::uint64_t get64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return le64toh(v);
}

}  // namespace

TcpHello tcp_hello(const TcpToken& token, int rank, int tag, std::size_t slot_bytes, int depth) {
  TcpHello h{};
  h.magic = htole64(kTcpHelloMagic);
  std::memcpy(h.token, token.data(), sizeof h.token);
  h.rank = static_cast<std::int32_t>(htole32(static_cast<std::uint32_t>(rank)));
  h.tag = static_cast<std::int32_t>(htole32(static_cast<std::uint32_t>(tag)));
  h.slot_bytes = htole64(slot_bytes);
  h.depth = htole32(static_cast<std::uint32_t>(depth));
  return h;
}

std::array<unsigned char, kTcpHeaderBytes> tcp_data_header(int tag, std::uint64_t seq, std::uint64_t length) {
  std::array<unsigned char, kTcpHeaderBytes> h{};
  put32(h.data(), static_cast<std::uint32_t>(tag));
  put32(h.data() + 4, kTcpDataKind);
  put64(h.data() + 8, seq);
  put64(h.data() + 16, length);
  return h;
}

std::array<unsigned char, kTcpCreditBytes> tcp_credit(int tag, std::uint64_t released) {
  std::array<unsigned char, kTcpCreditBytes> c{};
  put32(c.data(), static_cast<std::uint32_t>(tag));
  put32(c.data() + 4, kTcpCreditKind);
  put64(c.data() + 8, released);
  return c;
}

TcpHelloFields tcp_hello_fields(const TcpHello& h) {
  return {static_cast<int>(le32toh(static_cast<std::uint32_t>(h.rank))),
          static_cast<int>(le32toh(static_cast<std::uint32_t>(h.tag))), le64toh(h.slot_bytes), le32toh(h.depth)};
}

bool tcp_hello_has_token(const TcpHello& h, const TcpToken& token) {
  unsigned diff = 0;
  for (std::size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned>(h.token[i] ^ token[i]);
  return le64toh(h.magic) == kTcpHelloMagic && diff == 0;
}

std::optional<std::string> tcp_data_header_problem(const unsigned char* header, int tag, std::uint64_t due,
                                                   std::uint64_t slot_bytes, std::uint64_t buffer_bytes,
                                                   std::uint64_t* length) {
  const std::uint32_t got_tag = get32(header), kind = get32(header + 4);
  const std::uint64_t seq = get64(header + 8), len = get64(header + 16);
  if (got_tag != static_cast<std::uint32_t>(tag) || kind != kTcpDataKind)
    return fmt::format("a header of kind {} for tag {} on the channel of tag {}", kind, got_tag, tag);
  if (seq != due) return fmt::format("slot number {} where {} was due", seq, due);
  if (len > slot_bytes) return fmt::format("a slot of {} bytes; slots hold {}", len, slot_bytes);
  if (buffer_bytes > 0 && len > buffer_bytes)
    return fmt::format("a slot of {} bytes for a buffer of {}", len, buffer_bytes);
  *length = len;
  return std::nullopt;
}

std::optional<std::string> tcp_credit_problem(const unsigned char* credit, int tag, std::uint64_t credited,
                                              std::uint64_t written, std::uint64_t* released) {
  const std::uint32_t got_tag = get32(credit), kind = get32(credit + 4);
  const std::uint64_t n = get64(credit + 8);
  if (got_tag != static_cast<std::uint32_t>(tag) || kind != kTcpCreditKind)
    return fmt::format("a message of kind {} for tag {} where credits were due", kind, got_tag);
  if (n < credited || n > written)
    return fmt::format("a credit for {} released slots after {}, with {} sent", n, credited, written);
  *released = n;
  return std::nullopt;
}

std::string tcp_format_addresses(const std::vector<TcpInterfaceAddress>& addresses) {
  std::string s;
  for (const TcpInterfaceAddress& a : addresses)
    s += fmt::format("{}{}={}/{}", s.empty() ? "" : " ", a.interface, a.address, a.prefix);
  return s;
}

std::vector<TcpInterfaceAddress> tcp_parse_addresses(const std::string& text) {
  std::vector<TcpInterfaceAddress> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t eq = item.find('='), slash = item.rfind('/');
    if (eq == std::string::npos || slash == std::string::npos || slash < eq) continue;
    in_addr probe{};
    const std::string address = item.substr(eq + 1, slash - eq - 1);
    char* rest = nullptr;
    const long prefix = std::strtol(item.c_str() + slash + 1, &rest, 10);
    if (inet_pton(AF_INET, address.c_str(), &probe) != 1 || *rest != '\0' || prefix < 0 || prefix > 32) continue;
    out.push_back({item.substr(0, eq), address, static_cast<int>(prefix)});
  }
  return out;
}

namespace {

std::uint32_t ipv4(const std::string& address) {
  in_addr a{};
  inet_pton(AF_INET, address.c_str(), &a);
  return ntohl(a.s_addr);
}

bool same_subnet(const TcpInterfaceAddress& mine, const std::string& other) {
  const std::uint32_t mask = mine.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - mine.prefix);
  return (ipv4(mine.address) & mask) == (ipv4(other) & mask);
}

}  // namespace

std::string tcp_route_address(const std::vector<TcpInterfaceAddress>& mine,
                              const std::vector<std::vector<TcpInterfaceAddress>>& others) {
  auto is_mine = [&](const std::string& a) {
    return std::any_of(mine.begin(), mine.end(), [&](const TcpInterfaceAddress& m) { return m.address == a; });
  };
  for (const TcpInterfaceAddress& m : mine) {
    const bool reaches_all = std::all_of(others.begin(), others.end(), [&](const auto& host) {
      return std::any_of(host.begin(), host.end(), [&](const TcpInterfaceAddress& o) {
        return !is_mine(o.address) && same_subnet(m, o.address);
      });
    });
    if (reaches_all) return m.address;
  }
  return {};
}

}  // namespace ccbench
