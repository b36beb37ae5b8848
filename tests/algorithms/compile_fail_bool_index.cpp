// Must NOT compile: bool is not an index type, and crew says so (see CMakeLists.txt).
#include <crew/crew.hpp>

int main() {
    crew::parallel_for(false, true, [](bool) {});
    return crew::parallel_reduce(false, true, 0);
}
