#include "kernels/formats/common/bro_stream.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <bit>
#include <string>

#include "core/error.hpp"

namespace spmvd::bro {
namespace {

constexpr std::uint32_t kWordBits = 32;

void check_ell_shape(std::uint32_t slice_height, std::uint32_t words_per_symbol) {
  // A warp must lie inside one slice, so that its threads read the same bit widths and take
  // the same refill branch (Sec. 3.1: no warp divergence).
  if (slice_height == 0 || slice_height % 32 != 0)
    throw_invalid("bro-ell: slice height " + std::to_string(slice_height) +
                  " is not a positive multiple of 32");
  if (words_per_symbol != 1 && words_per_symbol != 4)
    throw_invalid("bro-ell: words_per_symbol " + std::to_string(words_per_symbol) +
                  " is not 1 or 4");
}

std::int64_t row_begin(const CsrMatrix<double>& m, std::int64_t r) {
  return m.row_offsets[static_cast<std::size_t>(r)];
}

// delta of entry k of row r (the row's entries start at `begin`).
std::uint64_t delta_at(const CsrMatrix<double>& m, std::int64_t r, std::int64_t begin,
                       std::int64_t k) {
  const auto c = static_cast<std::int64_t>(m.col_indices[static_cast<std::size_t>(k)]);
  if (k == begin) return static_cast<std::uint64_t>(c + 1);
  const auto previous = static_cast<std::int64_t>(m.col_indices[static_cast<std::size_t>(k - 1)]);
  if (c <= previous)
    throw_invalid("bro: row " + std::to_string(r) + ": column " + std::to_string(c) +
                  " does not follow column " + std::to_string(previous) +
                  " (columns must be strictly increasing)");
  return static_cast<std::uint64_t>(c - previous);
}

// The bit allocation of one slice (Fig. 1: the widest delta of each column).
std::vector<std::uint8_t> slice_bit_alloc(const CsrMatrix<double>& m, std::int64_t first,
                                          std::int64_t end) {
  std::vector<std::uint8_t> widths;
  for (std::int64_t r = first; r < end; ++r) {
    const std::int64_t begin = row_begin(m, r);
    const std::int64_t length = m.row_length(r);
    if (static_cast<std::int64_t>(widths.size()) < length)
      widths.resize(static_cast<std::size_t>(length), 0);
    for (std::int64_t j = 0; j < length; ++j) {
      auto& w = widths[static_cast<std::size_t>(j)];
      w = std::max<std::uint8_t>(
          w, static_cast<std::uint8_t>(bits_for(delta_at(m, r, begin, begin + j))));
    }
  }
  return widths;
}

// Words of one row stream of a slice: the bit widths' sum in whole words (b_p of Fig. 1 pads
// to a word; 4-word symbols add no padding, see bro_stream.hpp).
std::int64_t row_words(const std::vector<std::uint8_t>& widths) {
  std::int64_t bits = 0;
  for (const std::uint8_t w : widths) bits += w;
  return (bits + kWordBits - 1) / kWordBits;
}

// Appends `bits` bits of `value` at bit position `position` of a word sequence addressed
// through `word_at` (least significant first; bits <= 32).
template <typename WordAt>
void put_bits(WordAt&& word_at, std::int64_t position, std::uint32_t bits, std::uint64_t value) {
  if (bits == 0) return;
  const auto word = position / kWordBits;
  const auto shift = static_cast<std::uint32_t>(position % kWordBits);
  const std::uint64_t shifted = value << shift;
  word_at(word) |= static_cast<std::uint32_t>(shifted);
  if (shift + bits > kWordBits)
    word_at(word + 1) |= static_cast<std::uint32_t>(shifted >> kWordBits);
}

// Reads `bits` bits at `position` (the host twin of the device reader).
template <typename WordAt>
std::uint64_t get_bits(WordAt&& word_at, std::int64_t position, std::uint32_t bits) {
  if (bits == 0) return 0;
  const auto word = position / kWordBits;
  const auto shift = static_cast<std::uint32_t>(position % kWordBits);
  std::uint64_t buffer = word_at(word);
  if (shift + bits > kWordBits) buffer |= std::uint64_t{word_at(word + 1)} << kWordBits;
  return (buffer >> shift) & ((std::uint64_t{1} << bits) - 1);
}

std::int64_t interval_entries(std::uint32_t interval_rounds) {
  if (interval_rounds == 0) throw_invalid("bro-coo: interval_rounds is 0");
  return std::int64_t{32} * interval_rounds;
}

// The row of every entry (CSR order).
std::vector<std::int32_t> entry_rows(const CsrMatrix<double>& m) {
  if (m.rows >= (std::int64_t{1} << 31))
    throw_invalid("bro-coo: " + std::to_string(m.rows) + " rows do not fit 32-bit row indices");
  std::vector<std::int32_t> rows(static_cast<std::size_t>(m.nnz()));
  for (std::int64_t r = 0; r < m.rows; ++r)
    std::fill(rows.begin() + row_begin(m, r), rows.begin() + row_begin(m, r + 1),
              static_cast<std::int32_t>(r));
  return rows;
}

// One interval's width: the widest delta down any lane (Sec. 3.2: one width per interval).
std::uint32_t interval_bits(const std::vector<std::int32_t>& rows, std::int64_t begin,
                            std::int64_t end) {
  std::uint32_t bits = 0;
  for (std::int64_t k = begin + 32; k < end; ++k)
    bits = std::max(bits,
                    bits_for(static_cast<std::uint64_t>(rows[static_cast<std::size_t>(k)] -
                                                        rows[static_cast<std::size_t>(k - 32)])));
  for (std::int64_t k = begin; k < std::min(begin + 32, end); ++k)
    bits =
        std::max(bits, bits_for(static_cast<std::uint64_t>(rows[static_cast<std::size_t>(k)] -
                                                           rows[static_cast<std::size_t>(begin)])));
  return bits;
}

std::int64_t lane_words(std::int64_t begin, std::int64_t end, std::uint32_t bits) {
  const std::int64_t rounds = (end - begin + 31) / 32;
  return (rounds * bits + kWordBits - 1) / kWordBits;
}

}  // namespace

std::int64_t bro_ell_word_index(std::int64_t q, std::int64_t t, std::int64_t height,
                                std::int64_t row_words, std::uint32_t words_per_symbol) noexcept {
  const std::int64_t vector_words = words_per_symbol == 4 ? row_words / 4 * 4 : 0;
  if (q < vector_words) return ((q / 4) * height + t) * 4 + q % 4;
  return vector_words * height + (q - vector_words) * height + t;
}

std::uint32_t bits_for(std::uint64_t value) noexcept {
  return static_cast<std::uint32_t>(std::bit_width(value));
}

BroEllSize bro_ell_size(const CsrMatrix<double>& rows, std::uint32_t slice_height,
                        std::uint32_t words_per_symbol) {
  check_ell_shape(slice_height, words_per_symbol);
  BroEllSize size;
  for (std::int64_t first = 0; first < rows.rows; first += slice_height) {
    const std::int64_t end = std::min<std::int64_t>(first + slice_height, rows.rows);
    const std::vector<std::uint8_t> widths = slice_bit_alloc(rows, first, end);
    ++size.slices;
    size.columns += static_cast<std::int64_t>(widths.size());
    size.value_slots += static_cast<std::int64_t>(widths.size()) * (end - first);
    size.stream_words += row_words(widths) * (end - first);
  }
  return size;
}

template <typename Value>
BroEllLayout<Value> make_bro_ell_layout(const CsrMatrix<double>& rows, std::uint32_t slice_height,
                                        std::uint32_t words_per_symbol) {
  const BroEllSize size = bro_ell_size(rows, slice_height, words_per_symbol);
  BroEllLayout<Value> layout{
      .rows = rows.rows,
      .slice_height = slice_height,
      .words_per_symbol = words_per_symbol,
      .col_offsets = {0},
      .word_offsets = {0},
      .bit_alloc = {},
      .stream = std::vector<std::uint32_t>(static_cast<std::size_t>(size.stream_words), 0),
      .values = std::vector<Value>(static_cast<std::size_t>(size.value_slots), Value(0))};
  layout.bit_alloc.reserve(static_cast<std::size_t>(size.columns));
  for (std::int64_t first = 0; first < rows.rows; first += slice_height) {
    const std::int64_t end = std::min<std::int64_t>(first + slice_height, rows.rows);
    const std::int64_t height = end - first;
    const std::vector<std::uint8_t> widths = slice_bit_alloc(rows, first, end);
    const std::int64_t words = row_words(widths);
    const std::int64_t word_base = layout.word_offsets.back();
    const std::int64_t value_base = layout.col_offsets.back() * slice_height;
    for (std::int64_t t = 0; t < height; ++t) {
      const std::int64_t r = first + t;
      const std::int64_t begin = row_begin(rows, r);
      const auto word_at = [&](std::int64_t q) -> std::uint32_t& {
        return layout.stream[static_cast<std::size_t>(
            word_base + bro_ell_word_index(q, t, height, words, words_per_symbol))];
      };
      std::int64_t position = 0;
      for (std::int64_t j = 0; j < rows.row_length(r); ++j) {
        const std::uint32_t bits = widths[static_cast<std::size_t>(j)];
        put_bits(word_at, position, bits, delta_at(rows, r, begin, begin + j));
        position += bits;
        layout.values[static_cast<std::size_t>(value_base + j * height + t)] =
            static_cast<Value>(rows.values[static_cast<std::size_t>(begin + j)]);
      }
    }
    layout.bit_alloc.insert(layout.bit_alloc.end(), widths.begin(), widths.end());
    layout.col_offsets.push_back(layout.col_offsets.back() +
                                 static_cast<std::int64_t>(widths.size()));
    layout.word_offsets.push_back(word_base + words * height);
  }
  return layout;
}

template <typename Value>
std::vector<ColIndex> decode_bro_ell_row(const BroEllLayout<Value>& layout, std::int64_t row) {
  const std::int64_t h = layout.slice_height;
  const std::int64_t s = row / h;
  const std::int64_t t = row % h;
  const std::int64_t height = std::min(h, layout.rows - s * h);
  const std::int64_t words = (layout.word_offsets[static_cast<std::size_t>(s + 1)] -
                              layout.word_offsets[static_cast<std::size_t>(s)]) /
                             height;
  const auto word_at = [&](std::int64_t q) {
    return layout.stream[static_cast<std::size_t>(
        layout.word_offsets[static_cast<std::size_t>(s)] +
        bro_ell_word_index(q, t, height, words, layout.words_per_symbol))];
  };
  std::vector<ColIndex> columns;
  std::int64_t column = -1;
  std::int64_t position = 0;
  for (std::int64_t c = layout.col_offsets[static_cast<std::size_t>(s)];
       c < layout.col_offsets[static_cast<std::size_t>(s + 1)]; ++c) {
    const std::uint32_t bits = layout.bit_alloc[static_cast<std::size_t>(c)];
    const std::uint64_t delta = get_bits(word_at, position, bits);
    position += bits;
    if (delta == 0) continue;  // padding (Algorithm 1, line 17)
    column += static_cast<std::int64_t>(delta);
    columns.push_back(static_cast<ColIndex>(column));
  }
  return columns;
}

template <typename Value>
std::vector<double> multiply_bro_ell(const BroEllLayout<Value>& layout, std::span<const double> x) {
  std::vector<double> y(static_cast<std::size_t>(layout.rows), 0.0);
  const std::int64_t h = layout.slice_height;
  for (std::int64_t r = 0; r < layout.rows; ++r) {
    const std::int64_t s = r / h;
    const std::int64_t height = std::min(h, layout.rows - s * h);
    const std::int64_t value_base = layout.col_offsets[static_cast<std::size_t>(s)] * h + r % h;
    // Real entries are the leading columns of the row (padding only follows them).
    const std::vector<ColIndex> columns = decode_bro_ell_row(layout, r);
    for (std::size_t j = 0; j < columns.size(); ++j)
      y[static_cast<std::size_t>(r)] += static_cast<double>(layout.values[static_cast<std::size_t>(
                                            value_base + static_cast<std::int64_t>(j) * height)]) *
                                        x[static_cast<std::size_t>(columns[j])];
  }
  return y;
}

BroCooSize bro_coo_size(const CsrMatrix<double>& matrix, std::uint32_t interval_rounds) {
  return bro_coo_size(std::span<const RowOffset>(matrix.row_offsets), interval_rounds);
}

template <typename Value>
BroCooLayout<Value> make_bro_coo_layout(const CsrMatrix<double>& matrix,
                                        std::uint32_t interval_rounds) {
  const std::int64_t per_interval = interval_entries(interval_rounds);
  const std::vector<std::int32_t> rows = entry_rows(matrix);
  const BroCooSize size = bro_coo_size(matrix, interval_rounds);
  BroCooLayout<Value> layout{
      .nnz = matrix.nnz(),
      .interval_rounds = interval_rounds,
      .first_rows = {},
      .last_rows = {},
      .bits = {},
      .word_offsets = {0},
      .stream = std::vector<std::uint32_t>(static_cast<std::size_t>(size.stream_words), 0),
      .col_indices = matrix.col_indices,
      .values = std::vector<Value>(matrix.values.begin(), matrix.values.end())};
  for (std::int64_t begin = 0; begin < matrix.nnz(); begin += per_interval) {
    const std::int64_t end = std::min(begin + per_interval, matrix.nnz());
    const std::uint32_t bits = interval_bits(rows, begin, end);
    const std::int64_t base = layout.word_offsets.back();
    for (std::int64_t lane = 0; lane < 32; ++lane) {
      const auto word_at = [&](std::int64_t w) -> std::uint32_t& {
        return layout.stream[static_cast<std::size_t>(base + w * 32 + lane)];
      };
      std::int32_t previous = rows[static_cast<std::size_t>(begin)];
      std::int64_t position = 0;
      for (std::int64_t k = begin + lane; k < end; k += 32, position += bits) {
        const std::int32_t row = rows[static_cast<std::size_t>(k)];
        put_bits(word_at, position, bits, static_cast<std::uint64_t>(row - previous));
        previous = row;
      }
    }
    layout.first_rows.push_back(rows[static_cast<std::size_t>(begin)]);
    layout.last_rows.push_back(rows[static_cast<std::size_t>(end - 1)]);
    layout.bits.push_back(static_cast<std::uint8_t>(bits));
    layout.word_offsets.push_back(base + 32 * lane_words(begin, end, bits));
  }
  return layout;
}

template <typename Value>
std::vector<std::int32_t> decode_bro_coo_rows(const BroCooLayout<Value>& layout) {
  std::vector<std::int32_t> rows(static_cast<std::size_t>(layout.nnz));
  const std::int64_t per_interval = interval_entries(layout.interval_rounds);
  for (std::int64_t i = 0; i < layout.intervals(); ++i) {
    const std::int64_t begin = i * per_interval;
    const std::int64_t end = std::min(begin + per_interval, layout.nnz);
    const std::uint32_t bits = layout.bits[static_cast<std::size_t>(i)];
    for (std::int64_t lane = 0; lane < 32; ++lane) {
      const auto word_at = [&](std::int64_t w) {
        return layout.stream[static_cast<std::size_t>(
            layout.word_offsets[static_cast<std::size_t>(i)] + w * 32 + lane)];
      };
      std::int64_t row = layout.first_rows[static_cast<std::size_t>(i)];
      std::int64_t position = 0;
      for (std::int64_t k = begin + lane; k < end; k += 32, position += bits) {
        row += static_cast<std::int64_t>(get_bits(word_at, position, bits));
        rows[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(row);
      }
    }
  }
  return rows;
}

template <typename Value>
std::vector<double> multiply_bro_coo(const BroCooLayout<Value>& layout, std::int64_t rows,
                                     std::span<const double> x) {
  std::vector<double> y(static_cast<std::size_t>(rows), 0.0);
  const std::vector<std::int32_t> row_of = decode_bro_coo_rows(layout);
  for (std::int64_t k = 0; k < layout.nnz; ++k)
    y[static_cast<std::size_t>(row_of[static_cast<std::size_t>(k)])] +=
        static_cast<double>(layout.values[static_cast<std::size_t>(k)]) *
        x[static_cast<std::size_t>(layout.col_indices[static_cast<std::size_t>(k)])];
  return y;
}

namespace {

// One slice's bit allocation being accumulated entry by entry (Fig. 1: the widest delta of
// each column); its size is the slice's longest (sub-)row, real deltas never being 0.
struct WidthsAccumulator {
  std::vector<std::uint8_t> widths;
  void put(std::int64_t column, std::uint8_t bits) {
    const auto j = static_cast<std::size_t>(column);
    if (widths.size() <= j) widths.resize(j + 1, 0);
    widths[j] = std::max(widths[j], bits);
  }
};

void add_slice(BroEllSize& size, std::span<const std::uint8_t> widths, std::int64_t height) {
  std::int64_t bits = 0;
  for (const std::uint8_t w : widths) bits += w;
  ++size.slices;
  size.columns += static_cast<std::int64_t>(widths.size());
  size.value_slots += static_cast<std::int64_t>(widths.size()) * height;
  size.stream_words += (bits + kWordBits - 1) / kWordBits * height;
}

BroEllSize operator+(const BroEllSize& a, const BroEllSize& b) {
  return {a.slices + b.slices, a.stream_words + b.stream_words, a.columns + b.columns,
          a.value_slots + b.value_slots};
}

BroEllWalkSizes operator+(const BroEllWalkSizes& a, const BroEllWalkSizes& b) {
  return {a.whole + b.whole, a.split + b.split, a.leading + b.leading,
          a.leading_split + b.leading_split};
}

// The row of entry k and the rows after it, for entries visited in increasing order.
class RowCursor {
 public:
  RowCursor(std::span<const RowOffset> offsets, std::int64_t k)
      : offsets_(offsets),
        row_(std::upper_bound(offsets.begin(), offsets.end(), k) - offsets.begin() - 1) {}
  std::int64_t seek(std::int64_t k) {
    while (offsets_[static_cast<std::size_t>(row_ + 1)] <= k) ++row_;
    return row_;
  }

 private:
  std::span<const RowOffset> offsets_;
  std::int64_t row_;
};

}  // namespace

BroEllWalkSizes bro_ell_walk_sizes(const CsrMatrix<double>& m, std::uint32_t slice_height,
                                   std::uint32_t parts, std::int64_t leading_width) {
  check_ell_shape(slice_height, 1);
  if (parts == 0 || slice_height % parts != 0)
    throw_invalid("bro-ell: rows split into " + std::to_string(parts) +
                  " parts, which does not divide the slice height " + std::to_string(slice_height));
  if (leading_width < 0)
    throw_invalid("bro-hyb: ELL width " + std::to_string(leading_width) + " is negative");
  const std::int64_t h = slice_height;
  // A slice of split rows holds h / parts rows of m: `parts` of them make one slice of m.
  const std::int64_t block = h / parts;
  const std::int64_t slices = (m.rows + h - 1) / h;
  const auto walk = [&](const tbb::blocked_range<std::int64_t>& range, BroEllWalkSizes sizes) {
    WidthsAccumulator whole, split, leading_split;
    for (std::int64_t s = range.begin(); s < range.end(); ++s) {
      const std::int64_t first = s * h;
      const std::int64_t end = std::min(first + h, m.rows);
      whole.widths.clear();
      for (std::int64_t block_first = first; block_first < end; block_first += block) {
        const std::int64_t block_end = std::min(block_first + block, end);
        split.widths.clear();
        leading_split.widths.clear();
        for (std::int64_t r = block_first; r < block_end; ++r) {
          const std::int64_t begin = row_begin(m, r);
          const std::int64_t length = m.row_length(r);
          // Sub-row q of a row of n entries holds entries [q*chunk, (q+1)*chunk), chunk =
          // ceil(n / parts) (split_rows); its first delta is against no column (c + 1).
          const std::int64_t chunk = (length + parts - 1) / parts;
          const std::int64_t leading = std::min(length, leading_width);
          const std::int64_t leading_chunk = (leading + parts - 1) / parts;
          std::int64_t previous = -1;
          std::int64_t in_chunk = 0, in_leading_chunk = 0;
          for (std::int64_t j = 0; j < length; ++j) {
            const auto c =
                static_cast<std::int64_t>(m.col_indices[static_cast<std::size_t>(begin + j)]);
            if (c <= previous)
              throw_invalid("bro: row " + std::to_string(r) + ": column " + std::to_string(c) +
                            " does not follow column " + std::to_string(previous) +
                            " (columns must be strictly increasing)");
            const auto delta_bits =
                static_cast<std::uint8_t>(bits_for(static_cast<std::uint64_t>(c - previous)));
            const auto first_bits =
                static_cast<std::uint8_t>(bits_for(static_cast<std::uint64_t>(c + 1)));
            whole.put(j, delta_bits);
            split.put(in_chunk, in_chunk == 0 ? first_bits : delta_bits);
            if (++in_chunk == chunk) in_chunk = 0;
            if (j < leading) {
              leading_split.put(in_leading_chunk, in_leading_chunk == 0 ? first_bits : delta_bits);
              if (++in_leading_chunk == leading_chunk) in_leading_chunk = 0;
            }
            previous = c;
          }
        }
        add_slice(sizes.split, split.widths, parts * (block_end - block_first));
        add_slice(sizes.leading_split, leading_split.widths, parts * (block_end - block_first));
      }
      add_slice(sizes.whole, whole.widths, end - first);
      // The leading entries' deltas are the row's first ones, so their widths are the slice's
      // first min(K, num_col) widths.
      add_slice(sizes.leading,
                std::span<const std::uint8_t>(whole.widths)
                    .first(static_cast<std::size_t>(std::min<std::int64_t>(
                        leading_width, static_cast<std::int64_t>(whole.widths.size())))),
                end - first);
    }
    return sizes;
  };
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, slices), BroEllWalkSizes{}, walk,
      [](const BroEllWalkSizes& a, const BroEllWalkSizes& b) { return a + b; });
}

BroCooSize bro_coo_size(std::span<const RowOffset> row_offsets, std::uint32_t interval_rounds) {
  const std::int64_t per_interval = interval_entries(interval_rounds);
  const auto rows = static_cast<std::int64_t>(row_offsets.size()) - 1;
  if (rows >= (std::int64_t{1} << 31))
    throw_invalid("bro-coo: " + std::to_string(rows) + " rows do not fit 32-bit row indices");
  const std::int64_t nnz = rows > 0 ? row_offsets.back() : 0;
  const std::int64_t intervals = (nnz + per_interval - 1) / per_interval;
  const auto walk = [&](const tbb::blocked_range<std::int64_t>& range, BroCooSize size) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) {
      const std::int64_t begin = i * per_interval;
      const std::int64_t end = std::min(begin + per_interval, nnz);
      RowCursor row(row_offsets, begin), row_before(row_offsets, begin);
      const std::int64_t first_row = row.seek(begin);
      // The first round's deltas are against the interval's first row; rows never decrease in
      // CSR order, so the round's last entry has the widest (interval_bits).
      std::uint32_t bits =
          bits_for(static_cast<std::uint64_t>(row.seek(std::min(begin + 32, end) - 1) - first_row));
      for (std::int64_t k = begin + 32; k < end; ++k)
        bits = std::max(
            bits, bits_for(static_cast<std::uint64_t>(row.seek(k) - row_before.seek(k - 32))));
      ++size.intervals;
      size.stream_words += 32 * lane_words(begin, end, bits);
    }
    return size;
  };
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, intervals), BroCooSize{}, walk,
      [](const BroCooSize& a, const BroCooSize& b) {
        return BroCooSize{a.intervals + b.intervals, a.stream_words + b.stream_words};
      });
}

std::vector<RowOffset> trailing_offsets(const CsrMatrix<double>& m, std::int64_t width) {
  if (width < 0) throw_invalid("bro-hyb: ELL width " + std::to_string(width) + " is negative");
  std::vector<RowOffset> offsets(static_cast<std::size_t>(m.rows) + 1, 0);
  for (std::int64_t r = 0; r < m.rows; ++r)
    offsets[static_cast<std::size_t>(r + 1)] =
        offsets[static_cast<std::size_t>(r)] + std::max<std::int64_t>(0, m.row_length(r) - width);
  return offsets;
}

CsrMatrix<double> permute_rows(const CsrMatrix<double>& m, std::span<const std::int32_t> order) {
  if (static_cast<std::int64_t>(order.size()) != m.rows)
    throw_invalid("bro: row order has " + std::to_string(order.size()) + " entries, the matrix " +
                  std::to_string(m.rows) + " rows");
  std::vector<bool> seen(order.size(), false);
  CsrMatrix<double> out{m.rows, m.cols, {0}, {}, {}};
  out.row_offsets.reserve(order.size() + 1);
  out.col_indices.reserve(m.col_indices.size());
  out.values.reserve(m.values.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::int32_t r = order[i];
    if (r < 0 || r >= m.rows || seen[static_cast<std::size_t>(r)])
      throw_invalid("bro: row order entry " + std::to_string(i) + " (" + std::to_string(r) +
                    ") is out of range or repeated");
    seen[static_cast<std::size_t>(r)] = true;
    const auto begin = static_cast<std::size_t>(row_begin(m, r));
    const auto end = static_cast<std::size_t>(row_begin(m, r + 1));
    out.col_indices.insert(out.col_indices.end(), m.col_indices.begin() + begin,
                           m.col_indices.begin() + end);
    out.values.insert(out.values.end(), m.values.begin() + begin, m.values.begin() + end);
    out.row_offsets.push_back(static_cast<RowOffset>(out.col_indices.size()));
  }
  return out;
}

namespace {
// Rows of m with each row's entries [lo(len), hi(len)).
template <typename Range>
CsrMatrix<double> select_entries(const CsrMatrix<double>& m, Range&& range) {
  CsrMatrix<double> out{m.rows, m.cols, {0}, {}, {}};
  out.row_offsets.reserve(static_cast<std::size_t>(m.rows) + 1);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto [lo, hi] = range(m.row_length(r));
    const auto begin = static_cast<std::size_t>(row_begin(m, r) + lo);
    const auto end = static_cast<std::size_t>(row_begin(m, r) + hi);
    out.col_indices.insert(out.col_indices.end(), m.col_indices.begin() + begin,
                           m.col_indices.begin() + end);
    out.values.insert(out.values.end(), m.values.begin() + begin, m.values.begin() + end);
    out.row_offsets.push_back(static_cast<RowOffset>(out.col_indices.size()));
  }
  return out;
}
}  // namespace

CsrMatrix<double> leading_entries(const CsrMatrix<double>& m, std::int64_t width) {
  if (width < 0) throw_invalid("bro-hyb: ELL width " + std::to_string(width) + " is negative");
  return select_entries(m, [&](std::int64_t length) {
    return std::pair<std::int64_t, std::int64_t>{0, std::min(length, width)};
  });
}

CsrMatrix<double> trailing_entries(const CsrMatrix<double>& m, std::int64_t width) {
  if (width < 0) throw_invalid("bro-hyb: ELL width " + std::to_string(width) + " is negative");
  return select_entries(m, [&](std::int64_t length) {
    return std::pair<std::int64_t, std::int64_t>{std::min(length, width), length};
  });
}

CsrMatrix<double> split_rows(const CsrMatrix<double>& m, std::uint32_t parts) {
  if (parts == 0) throw_invalid("bro-ell: rows split into 0 parts");
  CsrMatrix<double> out{m.rows * parts, m.cols, {0}, m.col_indices, m.values};
  out.row_offsets.reserve(static_cast<std::size_t>(out.rows) + 1);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t begin = row_begin(m, r);
    const std::int64_t length = m.row_length(r);
    const std::int64_t chunk = (length + parts - 1) / parts;
    for (std::uint32_t q = 1; q <= parts; ++q)
      out.row_offsets.push_back(
          static_cast<RowOffset>(begin + std::min<std::int64_t>(length, q * chunk)));
  }
  return out;
}

#define SPMVD_BRO_INSTANTIATE(Value)                                                               \
  template BroEllLayout<Value> make_bro_ell_layout<Value>(const CsrMatrix<double>&, std::uint32_t, \
                                                          std::uint32_t);                          \
  template std::vector<ColIndex> decode_bro_ell_row<Value>(const BroEllLayout<Value>&,             \
                                                           std::int64_t);                          \
  template std::vector<double> multiply_bro_ell<Value>(const BroEllLayout<Value>&,                 \
                                                       std::span<const double>);                   \
  template BroCooLayout<Value> make_bro_coo_layout<Value>(const CsrMatrix<double>&,                \
                                                          std::uint32_t);                          \
  template std::vector<std::int32_t> decode_bro_coo_rows<Value>(const BroCooLayout<Value>&);       \
  template std::vector<double> multiply_bro_coo<Value>(const BroCooLayout<Value>&, std::int64_t,   \
                                                       std::span<const double>);
SPMVD_BRO_INSTANTIATE(float)
SPMVD_BRO_INSTANTIATE(double)
#undef SPMVD_BRO_INSTANTIATE

}  // namespace spmvd::bro
