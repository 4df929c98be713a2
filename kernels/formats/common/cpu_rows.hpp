#pragma once
// The row loop of the CPU formats (cpu_csr, cpu_coo) on oneTBB, and their store of y.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstdint>

namespace spmvd::cpu_detail {

// Calls range_fn(begin, end) for tasks of rows covering [0, rows), in parallel. Grain of 256
// rows: small enough that TBB's work stealing evens out rows of very different lengths, large
// enough that scheduling stays a small share of the work.
template <typename RangeFn>
void for_row_ranges(std::int64_t rows, RangeFn&& range_fn) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, 256),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      range_fn(range.begin(), range.end());
                    });
}

// y = alpha * sum + beta * y; with beta == 0, y is write-only (SpmvOperator contract): a NaN
// already in y must not leak.
template <typename Value>
void store_axpby(Value& y, Value alpha, Value sum, Value beta) {
  y = beta == Value(0) ? alpha * sum : alpha * sum + beta * y;
}

}  // namespace spmvd::cpu_detail
