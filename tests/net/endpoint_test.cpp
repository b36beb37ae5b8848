// tests/net/endpoint_test.cpp -- crew::net::endpoint: parsing (IPv4, IPv6, bad input), formatting.
#include <crew/net.hpp>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using crew::net::endpoint;

TEST(endpoint, parses_ipv4) {
    const endpoint e = endpoint::parse("127.0.0.1:8080");
    EXPECT_FALSE(e.is_v6());
    EXPECT_EQ(e.family(), AF_INET);
    EXPECT_EQ(e.port(), 8080);
    EXPECT_EQ(e.to_string(), "127.0.0.1:8080");
    EXPECT_EQ(endpoint::parse("0.0.0.0:0").port(), 0);
    EXPECT_EQ(endpoint::parse("255.255.255.255:65535").to_string(), "255.255.255.255:65535");
}

TEST(endpoint, parses_ipv6) {
    const endpoint e = endpoint::parse("[::1]:8080");
    EXPECT_TRUE(e.is_v6());
    EXPECT_EQ(e.port(), 8080);
    EXPECT_EQ(e.to_string(), "[::1]:8080");
    EXPECT_EQ(endpoint::parse("[2001:db8:0:0:0:0:0:1]:1").to_string(), "[2001:db8::1]:1");
    EXPECT_EQ(endpoint::parse("[::ffff:10.0.0.1]:80").to_string(), "[::ffff:10.0.0.1]:80");
    EXPECT_EQ(endpoint::parse("[::]:0").port(), 0);
}

TEST(endpoint, equality_and_round_trip) {
    EXPECT_EQ(endpoint::parse("127.0.0.1:80"), endpoint::loopback(80));
    EXPECT_EQ(endpoint::parse("[::1]:80"), endpoint::loopback(80, true));
    EXPECT_FALSE(endpoint::parse("127.0.0.1:80") == endpoint::parse("127.0.0.1:81"));
    EXPECT_FALSE(endpoint::parse("127.0.0.1:80") == endpoint::parse("127.0.0.2:80"));
    EXPECT_FALSE(endpoint::parse("127.0.0.1:80") == endpoint::parse("[::1]:80"));
    for (const char* t : {"10.1.2.3:443", "[fe80::1]:22", "[::]:9"})
        EXPECT_EQ(endpoint::parse(endpoint::parse(t).to_string()), endpoint::parse(t)) << t;
    EXPECT_EQ(endpoint{}.to_string(), "0.0.0.0:0");
}

TEST(endpoint, from_sockaddr) {
    const endpoint e = endpoint::parse("[::1]:7");
    EXPECT_EQ(endpoint::from_sockaddr(e.data(), e.size()), e);
    EXPECT_THROW(endpoint::from_sockaddr(e.data(), 4), std::invalid_argument);
    sockaddr sa{};
    sa.sa_family = AF_UNIX;
    EXPECT_THROW(endpoint::from_sockaddr(&sa, sizeof sa), std::invalid_argument);
    EXPECT_THROW(endpoint::from_sockaddr(nullptr, 0), std::invalid_argument);
}

TEST(endpoint, bad_input_throws_invalid_argument_quoting_the_text) {
    for (const char* t : {"", ":", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x",
                          "127.0.0.1:+80", "256.0.0.1:80", "1.2.3:80", "localhost:80", "::1:80", "[::1]", "[::1]80",
                          "[::1:80", "[zz::1]:80", "[]:80", "[127.0.0.1]:80", "127.0.0.1:123456", " 127.0.0.1:80",
                          "127.0.0.1: 80"}) {
        try {
            (void)endpoint::parse(t);
            ADD_FAILURE() << "accepted \"" << t << "\"";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("\"" + std::string(t) + "\""), std::string::npos) << e.what();
        }
    }
}
