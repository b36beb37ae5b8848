// tests/algorithms/common.hpp -- shared helpers of the parallel algorithms' tests.
#pragma once

#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"

namespace alg_test {

// The sizes every differential test walks (the 10,000,000-element runs live in heavy_test.cpp).
inline const std::vector<std::size_t> sizes{0, 1, 2, 3, 17, 1000, 4099};

inline std::vector<std::uint32_t> seeds() {
    std::vector<std::uint32_t> s{1, 2, 3};
    if (crew_test::scaled(10) >= 10) s.push_back(20260101);
    return s;
}

inline std::vector<int> random_ints(std::size_t n, std::uint32_t seed, int lo = -1000000, int hi = 1000000) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// Doubles of widely varying magnitude and sign: their sum depends on the order of the additions.
inline std::vector<double> random_doubles(std::size_t n, std::uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> mant(-1.0, 1.0);
    std::uniform_int_distribution<int> exp(-20, 20);
    std::vector<double> v(n);
    for (auto& x : v) x = std::ldexp(mant(rng), exp(rng));
    return v;
}

inline std::vector<std::string> random_words(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<std::string> v(n);
    for (auto& s : v) s = std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 26));
    return v;
}

// Calls f(partitioner) for each loop partitioner (all but crew::deterministic).
template <class F>
void each_loop_partitioner(F&& f) {
    f(crew::auto_partition);
    f(crew::static_partition);
    f(crew::simple_partition{1});
    f(crew::simple_partition{7});
    f(crew::simple_partition{100000});
}

// Calls f(partitioner) for every partitioner a reduction or a scan accepts.
template <class F>
void each_partitioner(F&& f) {
    each_loop_partitioner(f);
    f(crew::deterministic);
    f(crew::deterministic_partition{3});
}

// A 2x2 matrix of integers mod 2^32 under multiplication: associative, not commutative.
struct mat2 {
    std::uint32_t a = 1, b = 0, c = 0, d = 1;
    friend mat2 operator*(const mat2& x, const mat2& y) {
        return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
    }
    friend bool operator==(const mat2&, const mat2&) = default;
};

inline mat2 mat_of(int x) {
    auto u = static_cast<std::uint32_t>(x);
    return {u, u + 1, 3, u * 7 + 2};
}

struct test_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace alg_test
