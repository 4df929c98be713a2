#pragma once
// Bit-Representation-Optimized index streams (paper 001, Tang et al., SC'13), the host half:
// the BRO-ELL slice encoder (Sec. 3.1, Fig. 1) and the BRO-COO interval encoder (Sec. 3.2,
// Fig. 2), their sizes without building them (for the rules' device bytes), the host decoders
// the unit tests check them with, and the row transforms the BRO formats encode through
// (a row permutation, the first K entries of every row for BRO-HYB, rows cut into sub-rows for
// several threads per row). The device decoder is bro_stream.cuh.
//
// Bit order. A row stream is a sequence of 32-bit words; a value of b bits at bit position p of
// the stream occupies bits p .. p+b-1, least significant first (word p/32, bit p%32 upward,
// spilling into the next word). Algorithm 1 of the paper shifts a symbol buffer left (most
// significant first); reading least significant first from a 64-bit buffer decodes the same
// widths with one shift and one mask and no case for a value that straddles two words.
//
// Multiplexing (Sec. 3.1, "row streams are multiplexed with a symbol length of sym_len"): the
// rows of a slice all have row_words words (the widths' sum, rounded up to a word). With 32-bit
// symbols (words_per_symbol 1, the paper's), word q of row t of a slice of height h_s is at
// q * h_s + t from the slice's first word, so the slice's threads load word q of their rows from
// consecutive addresses (coalesced). With words_per_symbol 4, the first floor(row_words / 4) * 4
// words of each row are 128-bit symbols (symbol m of row t at (m * h_s + t) * 4: one 16-byte
// vector load a thread, 512 consecutive bytes a warp) and the remaining row_words % 4 words
// follow as 32-bit symbols: vector loads for the bulk of the stream without padding a row to a
// whole 16 bytes (bro_ell_word_index).
//
// Deltas (Sec. 3.1): delta_0 = c_0 + 1 and delta_j = c_j - c_{j-1}. The paper's example is
// 1-based; the +1 keeps a first column 0 from reading as the padding symbol 0. Columns must be
// strictly increasing within a row (CsrMatrix's normal form), so a real delta is never 0.

#include <cstdint>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd::bro {

// Gamma(u) of Eq. 2: the bits needed to hold u (0 for 0, 32 for 2^31 .. 2^32 - 1).
std::uint32_t bits_for(std::uint64_t value) noexcept;

// ---- BRO-ELL ----------------------------------------------------------------------------------

// Slice s holds stream rows [s*h, min((s+1)*h, rows)); its num_col (l_s) is its longest row.
// Entry (column c, row t) of slice s: bit width bit_alloc[col_offsets[s] + c]; its value at
// values[col_offsets[s] * h + c * h_s + t] (column-major within the slice, as ELL; a slice
// before the last is h rows high, so col_offsets[s] * h is where slice s's values start).
template <typename Value>
struct BroEllLayout {
  std::int64_t rows = 0;                   // stream rows encoded
  std::uint32_t slice_height = 0;          // h
  std::uint32_t words_per_symbol = 1;      // 1 or 4 (multiplexing above)
  std::vector<std::int64_t> col_offsets;   // slices + 1: prefix sums of num_col
  std::vector<std::int64_t> word_offsets;  // slices + 1: each slice's first stream word
  std::vector<std::uint8_t> bit_alloc;     // one width (0..32) per column of each slice
  std::vector<std::uint32_t> stream;       // the multiplexed row streams
  std::vector<Value> values;               // col_offsets.back() * h slots at most
  std::int64_t slices() const noexcept { return static_cast<std::int64_t>(col_offsets.size()) - 1; }
};

// What a BRO-ELL layout occupies, computed without building it (O(nnz), no allocation per
// entry). Matches the built layout exactly (tested).
struct BroEllSize {
  std::int64_t slices = 0;
  std::int64_t stream_words = 0;
  std::int64_t columns = 0;      // sum of num_col: bit_alloc entries
  std::int64_t value_slots = 0;  // sum of num_col * h_s: values, padding included
  friend bool operator==(const BroEllSize&, const BroEllSize&) = default;
};

// Throws Error(invalid_argument) for a slice height that is not a positive multiple of 32,
// words_per_symbol not 1 or 4, or a row whose columns are not strictly increasing.
BroEllSize bro_ell_size(const CsrMatrix<double>& rows, std::uint32_t slice_height,
                        std::uint32_t words_per_symbol);
template <typename Value>
BroEllLayout<Value> make_bro_ell_layout(const CsrMatrix<double>& rows, std::uint32_t slice_height,
                                        std::uint32_t words_per_symbol);

// The column indices of stream row `row`, decoded from the layout's stream and bit widths
// (the host twin of the kernel's loop; the unit tests compare it with the CSR it came from).
template <typename Value>
std::vector<ColIndex> decode_bro_ell_row(const BroEllLayout<Value>& layout, std::int64_t row);
// y[r] = sum over the decoded entries of stream row r of value * x[column], for every stream
// row, read from the built arrays only.
template <typename Value>
std::vector<double> multiply_bro_ell(const BroEllLayout<Value>& layout, std::span<const double> x);

// Position of word q of row t's stream from its slice's first word (multiplexing above).
std::int64_t bro_ell_word_index(std::int64_t q, std::int64_t t, std::int64_t height,
                                std::int64_t row_words, std::uint32_t words_per_symbol) noexcept;

// ---- BRO-COO ----------------------------------------------------------------------------------

// Interval i holds entries [i*E, min((i+1)*E, nnz)), E = 32 * interval_rounds; one warp takes
// it 32 entries a round, lane l the entries i*E + j*32 + l. Lane l's row stream holds the
// deltas of its rows down the interval's rounds (the first against first_rows[i]), each
// bits[i] wide (one width for the interval, Sec. 3.2); words_per_lane = ceil(rounds_i * bits /
// 32) words, word w of lane l at word_offsets[i] + w * 32 + l. Columns and values are COO's,
// in CSR order.
template <typename Value>
struct BroCooLayout {
  std::int64_t nnz = 0;
  std::uint32_t interval_rounds = 0;
  std::vector<std::int32_t> first_rows;    // per interval
  std::vector<std::int32_t> last_rows;     // per interval (the kernel's atomic rows)
  std::vector<std::uint8_t> bits;          // per interval
  std::vector<std::int64_t> word_offsets;  // intervals + 1
  std::vector<std::uint32_t> stream;
  std::vector<ColIndex> col_indices;  // nnz
  std::vector<Value> values;          // nnz
  std::int64_t intervals() const noexcept {
    return static_cast<std::int64_t>(word_offsets.size()) - 1;
  }
};

struct BroCooSize {
  std::int64_t intervals = 0;
  std::int64_t stream_words = 0;
  friend bool operator==(const BroCooSize&, const BroCooSize&) = default;
};

// Throws Error(invalid_argument) for interval_rounds 0 or rows >= 2^31.
BroCooSize bro_coo_size(const CsrMatrix<double>& matrix, std::uint32_t interval_rounds);
template <typename Value>
BroCooLayout<Value> make_bro_coo_layout(const CsrMatrix<double>& matrix,
                                        std::uint32_t interval_rounds);
// The row index of every entry, decoded from the streams.
template <typename Value>
std::vector<std::int32_t> decode_bro_coo_rows(const BroCooLayout<Value>& layout);
// y (rows entries) = A x over the built arrays.
template <typename Value>
std::vector<double> multiply_bro_coo(const BroCooLayout<Value>& layout, std::int64_t rows,
                                     std::span<const double> x);

// ---- sizes at feature time (one walk, no transformed copy) --------------------------------

// The BRO-ELL sizes of four layouts of one slice height, from one walk over the rows of `m`
// (oneTBB, parallel over slices): each entry's delta width is computed once and folded into
//   whole         - bro_ell_size(m, h, .)
//   split         - bro_ell_size(split_rows(m, parts), h, .)
//   leading       - bro_ell_size(leading_entries(m, leading_width), h, .)
//   leading_split - bro_ell_size(split_rows(leading_entries(m, leading_width), parts), h, .)
// equal to them exactly (tested), without building the transformed matrices. The sizes do not
// depend on words_per_symbol (4-word symbols add no padding). Throws Error(invalid_argument) as
// bro_ell_size does, for parts 0 or not dividing the slice height, a negative leading_width.
struct BroEllWalkSizes {
  BroEllSize whole;
  BroEllSize split;
  BroEllSize leading;
  BroEllSize leading_split;
};
BroEllWalkSizes bro_ell_walk_sizes(const CsrMatrix<double>& m, std::uint32_t slice_height,
                                   std::uint32_t parts, std::int64_t leading_width);

// bro_coo_size of a matrix whose rows have the entry ranges [row_offsets[r], row_offsets[r+1])
// (the BRO-COO row stream depends on the row of every entry only, not on columns): oneTBB,
// parallel over intervals, no per-entry array. Throws Error(invalid_argument) for
// interval_rounds 0 or rows >= 2^31.
BroCooSize bro_coo_size(std::span<const RowOffset> row_offsets, std::uint32_t interval_rounds);
// The row offsets of trailing_entries(m, width) (rows + 1 entries), without its entries.
std::vector<RowOffset> trailing_offsets(const CsrMatrix<double>& m, std::int64_t width);

// ---- row transforms ----------------------------------------------------------------------------

// Row i of the result is row order[i] of m. Throws Error(invalid_argument) unless `order` is a
// permutation of 0 .. rows-1.
CsrMatrix<double> permute_rows(const CsrMatrix<double>& m, std::span<const std::int32_t> order);
// The first `width` entries of every row (BRO-HYB's ELL part).
CsrMatrix<double> leading_entries(const CsrMatrix<double>& m, std::int64_t width);
// The entries beyond the first `width` of every row (BRO-HYB's COO part), same rows.
CsrMatrix<double> trailing_entries(const CsrMatrix<double>& m, std::int64_t width);
// Every row cut into `parts` sub-rows of contiguous entries, ceil(length / parts) each (the
// last ones shorter or empty): row r becomes sub-rows r*parts .. r*parts + parts-1, so `parts`
// neighbouring threads decode one row and add their sums (several threads per row, the paper's
// future work, Sec. 6).
CsrMatrix<double> split_rows(const CsrMatrix<double>& m, std::uint32_t parts);

}  // namespace spmvd::bro
