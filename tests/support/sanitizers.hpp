// tests/support/sanitizers.hpp -- is this test binary built with ThreadSanitizer or AddressSanitizer?
#pragma once

#include <crew/crew.hpp>

namespace crew_test {

inline constexpr bool sanitized = crew::detail::under_tsan
#if defined(__SANITIZE_ADDRESS__)
                                  || true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
                                  || true
#endif
#endif
    ;

}  // namespace crew_test
