// <crew/algorithms.hpp> -- crew's parallel algorithms (see docs/ALGORITHMS.md):
//
//   parallel_for(first_index, last_index, f)          parallel_for_each(first, last, f)
//   parallel_transform(first, last, out, f)            parallel_invoke(f1, f2, ...)
//   parallel_reduce(first, last, init, op)             parallel_transform_reduce(first, last, init, op, tr)
//   parallel_inclusive_scan(first, last, out, op)      parallel_exclusive_scan(first, last, out, init, op)
//   parallel_sort(first, last[, comp])                 parallel_stable_sort(first, last[, comp])
//   parallel_for(first_index, last_index, step, f)
//
// oneTBB's range/body model (range_algorithms.hpp, blocked_range.hpp):
//   blocked_range<T>(first, last[, grain])              blocked_range2d / blocked_range3d
//   parallel_for(range, body)                           parallel_reduce(range, identity, body, join)
//   parallel_reduce(range, body&)  (imperative)         parallel_deterministic_reduce(range, ...)
//
// The <algorithm>/<numeric> names (numeric.hpp, search.hpp, copy.hpp; std's arguments and results):
//   parallel_reduce(first, last)                       parallel_transform_reduce(first1, last1, first2, init[, op1, op2])
//   parallel_transform_inclusive_scan(first, last, out, op, tr[, init])
//   parallel_transform_exclusive_scan(first, last, out, init, op, tr)
//   parallel_count(first, last, value)                 parallel_count_if(first, last, pred)
//   parallel_find(first, last, value)                  parallel_find_if(first, last, pred)   (early stop)
//   parallel_find_if_not(first, last, pred)            parallel_any_of / all_of / none_of(first, last, pred)
//   parallel_equal(first1, last1, first2[, last2][, pred])
//   parallel_min_element / max_element / minmax_element(first, last[, comp])
//   parallel_copy_if(first, last, out, pred)           parallel_fill(first, last, value)
//   parallel_generate(first, last, gen)                parallel_merge(first1, last1, first2, last2, out[, comp])
//   parallel_partition(first, last, pred)              parallel_stable_partition(first, last, pred)
// ranges.hpp: every algorithm above also takes a random-access sized range (parallel_sort(v),
// parallel_find_if(v, pred, proj), parallel_reduce(std::views::iota(0, n), 0L), ...).
//
// Each optionally takes a partitioner first or (as oneTBB writes it) last: crew::auto_partition
// (default), crew::static_partition, crew::simple_partition{grain}, or for reductions and scans
// crew::deterministic; oneTBB's spellings crew::auto_partitioner(), crew::simple_partitioner(),
// crew::static_partitioner() and crew::affinity_partitioner work too. They run on the pool of the
// calling worker, or on crew::default_pool() when called from outside every pool.
#pragma once

#include "crew/algorithms/blocked_range.hpp"
#include "crew/algorithms/copy.hpp"
#include "crew/algorithms/for_each.hpp"
#include "crew/algorithms/numeric.hpp"
#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/range.hpp"
#include "crew/algorithms/range_algorithms.hpp"
#include "crew/algorithms/ranges.hpp"
#include "crew/algorithms/reduce.hpp"
#include "crew/algorithms/scan.hpp"
#include "crew/algorithms/search.hpp"
#include "crew/algorithms/sort.hpp"
