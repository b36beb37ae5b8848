// bench/group_instructions.cpp -- a small driver for counting instructions per task_group child
// against a join child (session 12): skynet written with crew::task_group as the public
// cross-runtime suite writes it (9 x run, the 10th inline, wait), and the same tree through a
// 10-way crew::fork_join, on a pool of one worker. Not part of the CMake build:
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/group_instructions.cpp build/libcrew.a -o drv -lpthread
//   valgrind --tool=callgrind ./drv 10000 g; valgrind --tool=callgrind ./drv 100000 g
// instructions per child = (the second total - the first) / 99990 (111110 - 11110 children, 10 per
// node); `f` instead of `g` for the fork_join form (9 forked children per node, the 10th inline,
// so the same difference over 99990 is per child there too).
#include <crew/crew.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
long sky_group(long num, long size) {
    if (size == 1) return num;
    long s[10];
    crew::task_group g;
    for (int i = 0; i < 9; ++i) g.run([&s, i, num, size] { s[i] = sky_group(num + i * (size / 10), size / 10); });
    s[9] = sky_group(num + 9 * (size / 10), size / 10);
    g.wait();
    long t = 0;
    for (long x : s) t += x;
    return t;
}
long sky_fork(long num, long size) {
    if (size == 1) return num;
    long s[10];
    auto f = [&](int i) { s[i] = sky_fork(num + i * (size / 10), size / 10); };
    crew::fork_join([&] { f(0); }, [&] { f(1); }, [&] { f(2); }, [&] { f(3); }, [&] { f(4); },
                    [&] { f(5); }, [&] { f(6); }, [&] { f(7); }, [&] { f(8); }, [&] { f(9); });
    long t = 0;
    for (long x : s) t += x;
    return t;
}
int main(int argc, char** argv) {
    if (argc < 3 || (std::strcmp(argv[2], "g") != 0 && std::strcmp(argv[2], "f") != 0)) {
        std::fprintf(stderr, "usage: drv <skynet size> g|f\n");
        return 2;
    }
    const long n = std::atol(argv[1]);
    crew::pool p(1);
    if (argv[2][0] == 'g') std::printf("%ld\n", p.run([&] { return sky_group(0, n); }));
    else std::printf("%ld\n", p.run([&] { return sky_fork(0, n); }));
}
