#include "kernels/formats/common/bar_reorder.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_set>

#include "core/error.hpp"
#include "kernels/formats/common/bro_stream.hpp"

namespace spmvd::bro {
namespace {

// One slice being filled: d(S, j) per column, the x lines of each column (as one set of
// (column, line) keys), and the rows in insertion order.
struct Cluster {
  std::vector<std::uint8_t> widths;
  std::int64_t width_sum = 0;
  std::unordered_set<std::uint64_t> lines;
  std::vector<std::int32_t> rows;
};

std::uint64_t line_key(std::int64_t column_position, ColIndex column) {
  return (static_cast<std::uint64_t>(column_position) << 32) |
         static_cast<std::uint64_t>(column / kBarXEntriesPerLine);
}

std::int64_t symbols(std::int64_t bits) {
  return (bits + kBarSymbolBits - 1) / kBarSymbolBits;
}

// The cost in brackets of Eq. 1 for the cluster.
std::int64_t cluster_cost(const Cluster& s) {
  return symbols(s.width_sum) + static_cast<std::int64_t>(s.lines.size());
}

// How much the cost in brackets grows when row r joins s.
std::int64_t added_cost(const Cluster& s, const CsrMatrix<double>& m, std::int32_t r) {
  const std::int64_t begin = m.row_offsets[static_cast<std::size_t>(r)];
  std::int64_t width_sum = s.width_sum;
  std::int64_t new_lines = 0;
  ColIndex previous = -1;
  for (std::int64_t j = 0; j < m.row_length(r); ++j) {
    const ColIndex c = m.col_indices[static_cast<std::size_t>(begin + j)];
    const auto bits = static_cast<std::uint8_t>(bits_for(static_cast<std::uint64_t>(c - previous)));
    previous = c;
    const std::uint8_t had = j < static_cast<std::int64_t>(s.widths.size()) ? s.widths[static_cast<std::size_t>(j)] : 0;
    if (bits > had) width_sum += bits - had;
    if (!s.lines.contains(line_key(j, c))) ++new_lines;
  }
  return symbols(width_sum) - symbols(s.width_sum) + new_lines;
}

void add_row(Cluster& s, const CsrMatrix<double>& m, std::int32_t r) {
  const std::int64_t begin = m.row_offsets[static_cast<std::size_t>(r)];
  const std::int64_t length = m.row_length(r);
  if (static_cast<std::int64_t>(s.widths.size()) < length) s.widths.resize(static_cast<std::size_t>(length), 0);
  ColIndex previous = -1;
  for (std::int64_t j = 0; j < length; ++j) {
    const ColIndex c = m.col_indices[static_cast<std::size_t>(begin + j)];
    const auto bits = static_cast<std::uint8_t>(bits_for(static_cast<std::uint64_t>(c - previous)));
    previous = c;
    std::uint8_t& had = s.widths[static_cast<std::size_t>(j)];
    if (bits > had) {
      s.width_sum += bits - had;
      had = bits;
    }
    s.lines.insert(line_key(j, c));
  }
  s.rows.push_back(r);
}

// Sum of the bracketed costs of the slices of `rows` taken h at a time.
std::int64_t slices_cost(const CsrMatrix<double>& m, std::span<const std::int32_t> rows,
                         std::uint32_t h) {
  std::int64_t cost = 0;
  for (std::size_t first = 0; first < rows.size(); first += h) {
    Cluster s;
    for (std::size_t i = first; i < std::min<std::size_t>(first + h, rows.size()); ++i)
      add_row(s, m, rows[i]);
    cost += cluster_cost(s);
  }
  return cost;
}

// Algorithm 2 on the rows of one window; returns them in slice order.
std::vector<std::int32_t> greedy_window(const CsrMatrix<double>& m, std::span<const std::int32_t> rows,
                                        std::uint32_t h) {
  const std::size_t n = rows.size();
  const std::size_t v = (n + h - 1) / h;
  // Line 2: rows sorted by length (longest first; stable, so equal lengths keep their order).
  std::vector<std::int32_t> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::int32_t a, std::int32_t b) {
    return m.row_length(a) > m.row_length(b);
  });
  std::vector<Cluster> clusters(v);
  const auto capacity = [&](std::size_t t) { return t + 1 < v ? h : n - (v - 1) * h; };
  // Lines 3-6: slice t seeded with sorted row t*h.
  std::vector<bool> placed(n, false);
  for (std::size_t t = 0; t < v; ++t) {
    add_row(clusters[t], m, sorted[t * h]);
    placed[t * h] = true;
  }
  // Lines 7-13: every other row to the non-full slice whose cost grows least.
  for (std::size_t i = 0; i < n; ++i) {
    if (placed[i]) continue;
    std::size_t best = v;
    std::int64_t best_cost = 0;
    for (std::size_t t = 0; t < v; ++t) {
      if (clusters[t].rows.size() >= capacity(t)) continue;
      const std::int64_t cost = added_cost(clusters[t], m, sorted[i]);
      if (best == v || cost < best_cost) {
        best = t;
        best_cost = cost;
      }
    }
    add_row(clusters[best], m, sorted[i]);
  }
  std::vector<std::int32_t> out;
  out.reserve(n);
  for (const Cluster& s : clusters) out.insert(out.end(), s.rows.begin(), s.rows.end());
  return out;
}

void check_height(std::uint32_t slice_height) {
  if (slice_height == 0) throw_invalid("bar: slice height is 0");
}

}  // namespace

double bar_objective(const CsrMatrix<double>& m, std::span<const std::int32_t> order,
                     std::uint32_t slice_height) {
  check_height(slice_height);
  const CsrMatrix<double> permuted = permute_rows(m, order);  // validates the permutation
  std::vector<std::int32_t> identity(static_cast<std::size_t>(m.rows));
  std::iota(identity.begin(), identity.end(), 0);
  return static_cast<double>(slice_height) / kBarWarpSize *
         static_cast<double>(slices_cost(permuted, identity, slice_height));
}

std::vector<std::int32_t> bar_order(const CsrMatrix<double>& m, std::uint32_t slice_height,
                                    std::uint32_t window_slices) {
  check_height(slice_height);
  if (window_slices == 0) throw_invalid("bar: window of 0 slices");
  if (m.rows >= (std::int64_t{1} << 31))
    throw_invalid("bar: " + std::to_string(m.rows) + " rows do not fit 32-bit row indices");
  std::vector<std::int32_t> order(static_cast<std::size_t>(m.rows));
  std::iota(order.begin(), order.end(), 0);
  const std::size_t window = std::size_t{slice_height} * window_slices;
  for (std::size_t first = 0; first < order.size(); first += window) {
    const std::span<std::int32_t> rows(order.data() + first, std::min(window, order.size() - first));
    const std::vector<std::int32_t> greedy = greedy_window(m, rows, slice_height);
    // Slices align with windows, so Phi is a sum over windows: keeping the better of the two
    // per window keeps the whole no worse than the identity.
    if (slices_cost(m, greedy, slice_height) < slices_cost(m, rows, slice_height))
      std::copy(greedy.begin(), greedy.end(), rows.begin());
  }
  return order;
}

}  // namespace spmvd::bro
