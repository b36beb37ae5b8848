// src/net/endpoint.cpp -- crew::net::endpoint parsing and formatting.
#include "crew/net/endpoint.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <stdexcept>

namespace crew::net {

namespace {

[[noreturn]] void bad_endpoint(std::string_view text, const char* why) {
    std::string msg = "crew::net::endpoint::parse: \"";
    msg.append(text).append("\": ").append(why);
    throw std::invalid_argument(msg);
}

std::uint16_t parse_port(std::string_view all, std::string_view p) {
    if (p.empty() || p.size() > 5) bad_endpoint(all, "expected a port 0..65535 after ':'");
    unsigned v = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec != std::errc{} || end != p.data() + p.size() || v > 65535)
        bad_endpoint(all, "expected a port 0..65535 after ':'");
    return static_cast<std::uint16_t>(v);
}

}  // namespace

endpoint::endpoint() noexcept {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage_);
    in->sin_family = AF_INET;
}

endpoint endpoint::parse(std::string_view text) {
    endpoint e;
    std::string host;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) bad_endpoint(text, "missing ']' after an IPv6 address");
        if (close + 1 >= text.size() || text[close + 1] != ':') bad_endpoint(text, "expected ':port' after ']'");
        host.assign(text.substr(1, close - 1));
        port = text.substr(close + 2);
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&e.storage_);
        in6->sin6_family = AF_INET6;
        if (::inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) != 1) bad_endpoint(text, "not an IPv6 address");
        in6->sin6_port = htons(parse_port(text, port));
        return e;
    }
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) bad_endpoint(text, "expected \"address:port\"");
    host.assign(text.substr(0, colon));
    port = text.substr(colon + 1);
    auto* in = reinterpret_cast<sockaddr_in*>(&e.storage_);
    in->sin_family = AF_INET;
    if (host.find(':') != std::string::npos) bad_endpoint(text, "an IPv6 address needs brackets: \"[addr]:port\"");
    if (::inet_pton(AF_INET, host.c_str(), &in->sin_addr) != 1) bad_endpoint(text, "not an IPv4 address");
    in->sin_port = htons(parse_port(text, port));
    return e;
}

endpoint endpoint::loopback(std::uint16_t port, bool v6) noexcept {
    endpoint e;
    if (v6) {
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&e.storage_);
        in6->sin6_family = AF_INET6;
        in6->sin6_addr = in6addr_loopback;
        in6->sin6_port = htons(port);
    } else {
        auto* in = reinterpret_cast<sockaddr_in*>(&e.storage_);
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        in->sin_port = htons(port);
    }
    return e;
}

endpoint endpoint::from_sockaddr(const sockaddr* sa, socklen_t len) {
    endpoint e;
    if (sa != nullptr && sa->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
        std::memcpy(&e.storage_, sa, sizeof(sockaddr_in));
    } else if (sa != nullptr && sa->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
        std::memcpy(&e.storage_, sa, sizeof(sockaddr_in6));
    } else {
        throw std::invalid_argument("crew::net::endpoint::from_sockaddr: not an IPv4/IPv6 address");
    }
    return e;
}

std::uint16_t endpoint::port() const noexcept {
    if (is_v6()) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
    return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
}

socklen_t endpoint::size() const noexcept {
    return is_v6() ? static_cast<socklen_t>(sizeof(sockaddr_in6)) : static_cast<socklen_t>(sizeof(sockaddr_in));
}

std::string endpoint::to_string() const {
    char buf[INET6_ADDRSTRLEN] = {};
    std::string out;
    if (is_v6()) {
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf, sizeof buf);
        out.append("[").append(buf).append("]");
    } else {
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf, sizeof buf);
        out.append(buf);
    }
    out.append(":").append(std::to_string(port()));
    return out;
}

bool operator==(const endpoint& a, const endpoint& b) noexcept {
    if (a.family() != b.family() || a.port() != b.port()) return false;
    if (a.is_v6()) {
        const auto* x = reinterpret_cast<const sockaddr_in6*>(&a.storage_);
        const auto* y = reinterpret_cast<const sockaddr_in6*>(&b.storage_);
        return std::memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0 && x->sin6_scope_id == y->sin6_scope_id;
    }
    const auto* x = reinterpret_cast<const sockaddr_in*>(&a.storage_);
    const auto* y = reinterpret_cast<const sockaddr_in*>(&b.storage_);
    return x->sin_addr.s_addr == y->sin_addr.s_addr;
}

}  // namespace crew::net
