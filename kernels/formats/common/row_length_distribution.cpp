#include "kernels/formats/common/row_length_distribution.hpp"

#include <algorithm>

namespace spmvd {

bool distribution_covers_nnz(const MatrixFeatures& features) {
  std::int64_t entries = 0;
  for (const RowLengthCount& bucket : features.distribution) entries += bucket.length * bucket.rows;
  return entries == features.nnz;
}

std::int64_t rows_with_length_at_least(const MatrixFeatures& features, std::int64_t length) {
  if (length <= 0) return features.rows;
  std::int64_t rows = 0;
  for (const RowLengthCount& bucket : features.distribution)
    if (bucket.length >= length) rows += bucket.rows;
  return rows;
}

std::int64_t entries_beyond_width(const MatrixFeatures& features, std::int64_t width) {
  std::int64_t entries = 0;
  for (const RowLengthCount& bucket : features.distribution)
    if (bucket.length > width)
      entries += (bucket.length - std::max<std::int64_t>(width, 0)) * bucket.rows;
  return entries;
}

std::int64_t sorted_group_leader_sum(const MatrixFeatures& features, std::int64_t group_rows,
                                     std::int64_t divisor) {
  if (group_rows <= 0 || divisor <= 0) return 0;
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  std::int64_t sum = 0;
  std::int64_t position = 0;  // sorted-descending position of the bucket's first row
  // The distribution is ascending in length: walk it backwards. Empty rows come last and lead
  // groups of width 0, which add nothing.
  for (auto bucket = features.distribution.rbegin(); bucket != features.distribution.rend();
       ++bucket) {
    // Group leaders are the positions that are multiples of group_rows.
    const std::int64_t leaders =
        ceil_div(position + bucket->rows, group_rows) - ceil_div(position, group_rows);
    sum += leaders * ceil_div(bucket->length, divisor);
    position += bucket->rows;
  }
  return sum;
}

std::int64_t longest_rows_length_sum(const MatrixFeatures& features, std::int64_t count) {
  std::int64_t sum = 0;
  for (auto bucket = features.distribution.rbegin();
       bucket != features.distribution.rend() && count > 0; ++bucket) {
    const std::int64_t taken = std::min(count, bucket->rows);
    sum += taken * bucket->length;
    count -= taken;
  }
  return sum;
}

}  // namespace spmvd
