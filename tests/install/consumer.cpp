#include <crew/crew.hpp>

int main() {
    auto [a, b] = crew::join([] { return 20; }, [] { return 22; });
    crew::pool pool{2};
    return pool.run([&] { return a + b; }) == 42 ? 0 : 1;
}
