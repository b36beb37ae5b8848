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
// Each optionally takes a partitioner first or (as oneTBB writes it) last: crew::auto_partition
// (default), crew::static_partition, crew::simple_partition{grain}, or for reductions and scans
// crew::deterministic; oneTBB's spellings crew::auto_partitioner(), crew::simple_partitioner(),
// crew::static_partitioner() and crew::affinity_partitioner work too. They run on the pool of the
// calling worker, or on crew::default_pool() when called from outside every pool.
#pragma once

#include "crew/algorithms/blocked_range.hpp"
#include "crew/algorithms/for_each.hpp"
#include "crew/algorithms/partition.hpp"
#include "crew/algorithms/range.hpp"
#include "crew/algorithms/range_algorithms.hpp"
#include "crew/algorithms/reduce.hpp"
#include "crew/algorithms/scan.hpp"
#include "crew/algorithms/sort.hpp"
