// Must NOT compile: crew's algorithms need random-access iterators, and say so (see CMakeLists.txt).
#include <crew/crew.hpp>

#include <list>

int main() {
    std::list<int> l{3, 1, 2};
    crew::parallel_sort(l.begin(), l.end());
}
