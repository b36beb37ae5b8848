// crew/net/endpoint.hpp -- crew::net::endpoint: an IPv4 or IPv6 address and a port.
//
//   auto a = crew::net::endpoint::parse("127.0.0.1:8080");
//   auto b = crew::net::endpoint::parse("[::1]:0");     // port 0: bind picks a free port
//   a.to_string() == "127.0.0.1:8080"; a.port() == 8080; a.is_v6() == false
//
// parse() accepts numeric addresses only (no name resolution, never blocks): "a.b.c.d:port" or
// "[v6]:port"; anything else throws std::invalid_argument whose message quotes the text.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace crew::net {

class endpoint {
public:
    // 0.0.0.0:0.
    endpoint() noexcept;

    // Numeric "ipv4:port" or "[ipv6]:port"; throws std::invalid_argument (the text in the message).
    static endpoint parse(std::string_view text);
    // Loopback (127.0.0.1 or ::1) at `port`.
    static endpoint loopback(std::uint16_t port = 0, bool v6 = false) noexcept;
    // From a socket address the kernel filled in (getsockname, accept). Throws std::invalid_argument
    // for a family other than AF_INET / AF_INET6 or a too-short length.
    static endpoint from_sockaddr(const sockaddr* sa, socklen_t len);

    std::uint16_t port() const noexcept;
    bool is_v6() const noexcept { return storage_.ss_family == AF_INET6; }
    // "127.0.0.1:8080" or "[::1]:8080".
    std::string to_string() const;

    const sockaddr* data() const noexcept { return reinterpret_cast<const sockaddr*>(&storage_); }
    socklen_t size() const noexcept;
    int family() const noexcept { return storage_.ss_family; }

    friend bool operator==(const endpoint& a, const endpoint& b) noexcept;

private:
    sockaddr_storage storage_{};
};

}  // namespace crew::net
