#include "partition/row_reordering.hpp"

#include <sys/mman.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Rows per chunk of the counting sort: at least this many, so that a chunk's k counters are
// few next to its rows; at most kMaxChunks chunks, so the count table stays small.
constexpr std::int64_t kMinChunkRows = 1 << 15;
constexpr std::int64_t kMaxChunks = 256;

constexpr std::int64_t kNoBadRow = std::numeric_limits<std::int64_t>::max();

// Lengths below this are looked up in a table filled once from the boundaries (16 KiB: stays in
// L1) instead of searched: a binary search per row mispredicts a branch at almost every step,
// which made the reordering of a 50M-non-zero power-law matrix (5.9M rows, k = 252) take 240 ms
// on the 2-core development machine (partition-bench, 2026-11-23). Longer rows — under 1e-4 of
// a power-law matrix's — still take Algorithm 3's binary search.
constexpr std::int64_t kTableLengths = 1 << 12;

// The bucket of every row length: block j, k for an empty row, or k for a row past M_k (which
// the caller tells apart from an empty row by its length).
class BucketOfLength {
 public:
  explicit BucketOfLength(std::span<const std::int64_t> upper_lengths)
      : upper_lengths_(upper_lengths),
        k_(static_cast<std::uint32_t>(upper_lengths.size())),
        table_(kTableLengths, k_) {
    std::int64_t length = 1;
    for (std::uint32_t j = 0; j < k_ && length < kTableLengths; ++j) {
      for (; length <= upper_lengths[j] && length < kTableLengths; ++length) table_[length] = j;
    }
  }
  std::int64_t operator()(std::int64_t length) const noexcept {
    if (length >= 0 && length < kTableLengths) return table_[length];
    return block_of_row_length(upper_lengths_, length);
  }

 private:
  std::span<const std::int64_t> upper_lengths_;
  std::uint32_t k_;
  std::vector<std::uint32_t> table_;  // table_[0] = k: empty rows follow the blocks
};

// Asks Linux to back [data, data + bytes) with 2 MiB pages before it is first touched (where
// transparent huge pages are in "madvise" mode, as on the Debian 12 development machine). The
// reordering's two fresh arrays (rowNo, 4 bytes a row, and
// the buckets, 2) otherwise fault in 4 KiB at a time: 28K faults and ~80 ms of system time per
// call on partition-bench's 19M-row matrix (perf stat, 2026-11-23). Advice only: ignored where
// unsupported, and no effect on the result.
void advise_huge_pages(void* data, std::size_t bytes) noexcept {
  constexpr std::uintptr_t kHugePageBytes = std::uintptr_t{1} << 21;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePageBytes - 1);
  if (last > first) {
    madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
}

}  // namespace

std::int64_t block_of_row_length(std::span<const std::int64_t> upper_lengths,
                                 std::int64_t length) noexcept {
  // Algorithm 3 lines 5-20: the first M_j >= length.
  return std::lower_bound(upper_lengths.begin(), upper_lengths.end(), length) -
         upper_lengths.begin();
}

BlockedRowOrder reorder_rows(std::span<const std::int64_t> row_offsets,
                             std::span<const std::int64_t> upper_lengths) {
  if (row_offsets.empty()) {
    throw_invalid("reorder_rows: row offsets are empty (need rows + 1 entries)");
  }
  const auto rows = static_cast<std::int64_t>(row_offsets.size()) - 1;
  if (rows > std::numeric_limits<std::int32_t>::max()) {
    throw_invalid("reorder_rows: " + std::to_string(rows) + " rows; rowNo holds < 2^31");
  }
  for (std::size_t j = 0; j < upper_lengths.size(); ++j) {
    if (upper_lengths[j] <= 0 || (j > 0 && upper_lengths[j] <= upper_lengths[j - 1])) {
      throw_invalid("reorder_rows: boundary M_" + std::to_string(j + 1) + " = " +
                    std::to_string(upper_lengths[j]) +
                    " must be positive and above the one before");
    }
  }
  const auto k = static_cast<std::int64_t>(upper_lengths.size());
  const std::int64_t buckets = k + 1;  // the k blocks, then the empty rows
  const std::int64_t chunk_rows = std::max(kMinChunkRows, (rows + kMaxChunks - 1) / kMaxChunks);
  const std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  const BucketOfLength bucket_of(upper_lengths);
  // Pass 1 keeps each row's bucket where it fits 16 bits, so that pass 2 reads 2 bytes a row
  // instead of the 16 of two row offsets (the reorder of partition-bench's matrix went from
  // 75 to 37-47 ms, 2026-11-23, same loaded 2-core machine); with more blocks pass 2 looks the
  // buckets up again.
  const bool keep_buckets = buckets <= std::numeric_limits<std::uint16_t>::max();
  // Not zeroed: pass 1 writes every entry, and its threads touch the pages first.
  const std::unique_ptr<std::uint16_t[]> row_buckets(
      keep_buckets ? new std::uint16_t[static_cast<std::size_t>(rows)] : nullptr);
  if (keep_buckets) advise_huge_pages(row_buckets.get(), rows * sizeof(std::uint16_t));

  // Pass 1: per chunk, the rows and the longest row of every bucket.
  std::vector<std::int64_t> counts(chunks * buckets, 0);  // [chunk][bucket]
  std::vector<std::int64_t> widths(chunks * buckets, 0);
  std::vector<std::int64_t> bad_rows(chunks, kNoBadRow);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunks, 1),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t c = range.begin(); c != range.end(); ++c) {
                        std::int64_t* count = &counts[c * buckets];
                        std::int64_t* width = &widths[c * buckets];
                        const std::int64_t end = std::min(rows, (c + 1) * chunk_rows);
                        for (std::int64_t r = c * chunk_rows; r < end; ++r) {
                          const std::int64_t length = row_offsets[r + 1] - row_offsets[r];
                          const std::int64_t b = bucket_of(length);
                          if (length < 0 || (length > 0 && b == k)) {
                            bad_rows[c] = r;
                            break;
                          }
                          ++count[b];
                          width[b] = std::max(width[b], length);
                          if (keep_buckets) row_buckets[r] = static_cast<std::uint16_t>(b);
                        }
                      }
                    });
  // No chunk at all for a matrix of no rows.
  const std::int64_t bad_row =
      bad_rows.empty() ? kNoBadRow : *std::min_element(bad_rows.begin(), bad_rows.end());
  if (bad_row != kNoBadRow) {
    const std::int64_t length = row_offsets[bad_row + 1] - row_offsets[bad_row];
    throw_invalid("reorder_rows: row " + std::to_string(bad_row) + " has length " +
                  std::to_string(length) +
                  (length < 0 ? " (offsets decrease)"
                              : ", above the last boundary M_k = " +
                                    std::to_string(k == 0 ? 0 : upper_lengths.back())));
  }

  // Exclusive scan, bucket-major then chunk: chunk c's rows of bucket b start after every
  // earlier bucket and after bucket b's rows in earlier chunks, which keeps the sort stable.
  BlockedRowOrder order;
  order.block_row_offsets.assign(k + 1, 0);
  order.block_widths.assign(k, 0);
  std::vector<std::int64_t> starts(chunks * buckets);
  std::int64_t position = 0;
  for (std::int64_t b = 0; b < buckets; ++b) {
    order.block_row_offsets[b] = position;
    for (std::int64_t c = 0; c < chunks; ++c) {
      starts[c * buckets + b] = position;
      position += counts[c * buckets + b];
      if (b < k) order.block_widths[b] = std::max(order.block_widths[b], widths[c * buckets + b]);
    }
  }

  // Pass 2: scatter. Each chunk writes only its own ranges.
  order.row_order.reserve(rows);
  advise_huge_pages(order.row_order.data(), rows * sizeof(std::int32_t));
  order.row_order.resize(rows);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunks, 1),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t c = range.begin(); c != range.end(); ++c) {
                        std::int64_t* next = &starts[c * buckets];
                        const std::int64_t end = std::min(rows, (c + 1) * chunk_rows);
                        if (keep_buckets) {
                          for (std::int64_t r = c * chunk_rows; r < end; ++r) {
                            order.row_order[next[row_buckets[r]]++] = static_cast<std::int32_t>(r);
                          }
                          continue;
                        }
                        for (std::int64_t r = c * chunk_rows; r < end; ++r) {
                          const std::int64_t length = row_offsets[r + 1] - row_offsets[r];
                          order.row_order[next[bucket_of(length)]++] = static_cast<std::int32_t>(r);
                        }
                      }
                    });
  return order;
}

}  // namespace spmvd
