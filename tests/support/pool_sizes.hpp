// tests/support/pool_sizes.hpp -- run a scenario on pools of 1, 2, 4 and 8 workers.
//
//   class my_test : public crew_test::pool_test {};
//   TEST_P(my_test, does_x) { crew::pool& p = pool(); ... }
//   CREW_ALL_POOL_SIZES(my_test);
#pragma once

#include <crew/crew.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace crew_test {

class pool_test : public ::testing::TestWithParam<std::size_t> {
protected:
    crew::pool& pool() {
        if (!pool_) pool_ = std::make_unique<crew::pool>(GetParam());
        return *pool_;
    }
    std::size_t workers() const { return GetParam(); }
    void TearDown() override { pool_.reset(); }

private:
    std::unique_ptr<crew::pool> pool_;
};

inline std::string pool_size_name(const ::testing::TestParamInfo<std::size_t>& info) {
    return std::to_string(info.param) + "_workers";
}

}  // namespace crew_test

#define CREW_ALL_POOL_SIZES(suite) \
    INSTANTIATE_TEST_SUITE_P(pools, suite, ::testing::Values(1, 2, 4, 8), crew_test::pool_size_name)
