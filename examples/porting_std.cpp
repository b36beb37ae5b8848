// porting_std: std::execution::par / Rayon idioms and their crew equivalents (docs/PORTING.md).
#include <crew/algorithms.hpp>
#include <crew/crew.hpp>

#include <cstdio>
#include <functional>
#include <numeric>
#include <vector>

int main() {
    std::vector<int> v(1000000);
    std::iota(v.begin(), v.end(), 0);
    long sum = crew::parallel_reduce(v, 0L);                                      // par_iter().sum()
    auto first_big = crew::parallel_find_if(v, [](int x) { return x > 999; });    // position_first
    long first_at = static_cast<long>(first_big - v.begin());
    bool any = crew::parallel_any_of(v, [](int x) { return x == 42; });          // find_any
    int lo = *crew::parallel_min_element(v);                                      // .min()
    std::vector<int> evens(v.size());
    auto end = crew::parallel_copy_if(v, evens.begin(), [](int x) { return x % 2 == 0; });  // filter().collect()
    evens.erase(end, evens.end());
    long dot = crew::parallel_transform_reduce(v.begin(), v.begin() + 100, v.begin(), 0L);  // inner product
    crew::parallel_sort(v, std::greater<>());                                     // par_sort_by
    std::printf("sum=%ld first>999 at %ld any=%d min=%d evens=%zu dot=%ld top=%d\n", sum, first_at, any, lo,
                evens.size(), dot, v[0]);
    return sum == 499999500000L && first_at == 1000 && lo == 0 && evens.size() == 500000 ? 0 : 1;
}
