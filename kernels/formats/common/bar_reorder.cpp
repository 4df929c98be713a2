#include "kernels/formats/common/bar_reorder.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "kernels/formats/common/bro_stream.hpp"

namespace spmvd::bro {
namespace {

// The rows of one window, indexed once: per entry its delta's bits and a dense id of its
// (column position, x line) pair, so a slice's set of lines is a byte per id (Eq. 3 without a
// hash lookup per evaluation: Algorithm 2 evaluates every row against every slice).
struct WindowRows {
  std::vector<std::int64_t> begin{0};  // entries of local row i: [begin[i], begin[i+1])
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> bits;
  std::uint32_t distinct_ids = 0;
  std::size_t size() const noexcept { return begin.size() - 1; }
};

WindowRows index_rows(const CsrMatrix<double>& m, std::span<const std::int32_t> rows) {
  WindowRows w;
  std::vector<std::pair<std::uint64_t, std::size_t>> keys;  // (position, line) of each entry
  for (const std::int32_t r : rows) {
    const std::int64_t first = m.row_offsets[static_cast<std::size_t>(r)];
    ColIndex previous = -1;
    for (std::int64_t j = 0; j < m.row_length(r); ++j) {
      const ColIndex c = m.col_indices[static_cast<std::size_t>(first + j)];
      w.bits.push_back(
          static_cast<std::uint8_t>(bits_for(static_cast<std::uint64_t>(c - previous))));
      previous = c;
      keys.emplace_back((static_cast<std::uint64_t>(j) << 32) |
                            static_cast<std::uint64_t>(c / kBarXEntriesPerLine),
                        keys.size());
    }
    w.begin.push_back(static_cast<std::int64_t>(keys.size()));
  }
  // Dense ids by sorting the keys (a window holds a few thousand entries).
  std::sort(keys.begin(), keys.end());
  w.ids.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0 && keys[i].first != keys[i - 1].first) ++w.distinct_ids;
    w.ids[keys[i].second] = w.distinct_ids;
  }
  if (!keys.empty()) ++w.distinct_ids;
  return w;
}

// One slice being filled: d(S, j) per column position, which (position, line) ids it reads,
// and its rows (local indices) in insertion order.
struct Cluster {
  std::vector<std::uint8_t> widths;
  std::int64_t width_sum = 0;
  std::vector<std::uint8_t> has_id;
  std::int64_t lines = 0;
  std::vector<std::size_t> rows;
  explicit Cluster(std::uint32_t ids) : has_id(ids, 0) {}
};

std::int64_t symbols(std::int64_t bits) { return (bits + kBarSymbolBits - 1) / kBarSymbolBits; }

// The cost in brackets of Eq. 1 for the cluster.
std::int64_t cluster_cost(const Cluster& s) { return symbols(s.width_sum) + s.lines; }

// How much the cost in brackets grows when local row i joins s.
std::int64_t added_cost(const Cluster& s, const WindowRows& w, std::size_t i) {
  std::int64_t width_sum = s.width_sum;
  std::int64_t new_lines = 0;
  for (std::int64_t k = w.begin[i]; k < w.begin[i + 1]; ++k) {
    const auto j = static_cast<std::size_t>(k - w.begin[i]);
    const std::uint8_t bits = w.bits[static_cast<std::size_t>(k)];
    const std::uint8_t had = j < s.widths.size() ? s.widths[j] : 0;
    if (bits > had) width_sum += bits - had;
    new_lines += s.has_id[w.ids[static_cast<std::size_t>(k)]] ? 0 : 1;
  }
  return symbols(width_sum) - symbols(s.width_sum) + new_lines;
}

void add_row(Cluster& s, const WindowRows& w, std::size_t i) {
  const auto length = static_cast<std::size_t>(w.begin[i + 1] - w.begin[i]);
  if (s.widths.size() < length) s.widths.resize(length, 0);
  for (std::int64_t k = w.begin[i]; k < w.begin[i + 1]; ++k) {
    std::uint8_t& had = s.widths[static_cast<std::size_t>(k - w.begin[i])];
    const std::uint8_t bits = w.bits[static_cast<std::size_t>(k)];
    if (bits > had) {
      s.width_sum += bits - had;
      had = bits;
    }
    std::uint8_t& seen = s.has_id[w.ids[static_cast<std::size_t>(k)]];
    s.lines += seen ? 0 : 1;
    seen = 1;
  }
  s.rows.push_back(i);
}

// What the slices of local rows `order`, taken h at a time, cost: Phi's bracketed terms (Eq. 1)
// and the BRO-ELL layout's sizes (bro_stream.hpp: a slice's stream is its rows' symbols, its
// value slots its longest row times its height).
struct SlicesCost {
  std::int64_t phi_terms = 0;
  std::int64_t stream_words = 0;
  std::int64_t columns = 0;
  std::int64_t value_slots = 0;
  // Is this layout no larger than `other` in every array BRO-ELL stores?
  bool no_larger_than(const SlicesCost& other) const {
    return stream_words <= other.stream_words && columns <= other.columns &&
           value_slots <= other.value_slots;
  }
};

SlicesCost slices_cost(const WindowRows& w, std::span<const std::size_t> order, std::uint32_t h) {
  SlicesCost cost;
  for (std::size_t first = 0; first < order.size(); first += h) {
    Cluster s(w.distinct_ids);
    const std::size_t end = std::min<std::size_t>(first + h, order.size());
    for (std::size_t i = first; i < end; ++i) add_row(s, w, order[i]);
    const auto height = static_cast<std::int64_t>(end - first);
    const auto columns = static_cast<std::int64_t>(s.widths.size());
    cost.phi_terms += cluster_cost(s);
    cost.stream_words += symbols(s.width_sum) * height;
    cost.columns += columns;
    cost.value_slots += columns * height;
  }
  return cost;
}

// Algorithm 2 on the rows of one window; returns local row indices in slice order.
std::vector<std::size_t> greedy_window(const WindowRows& w, std::uint32_t h) {
  const std::size_t n = w.size();
  const std::size_t v = (n + h - 1) / h;
  const auto length = [&](std::size_t i) { return w.begin[i + 1] - w.begin[i]; };
  // Line 2: rows sorted by length (longest first; stable, so equal lengths keep their order).
  std::vector<std::size_t> sorted(n);
  std::iota(sorted.begin(), sorted.end(), std::size_t{0});
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](std::size_t a, std::size_t b) { return length(a) > length(b); });
  std::vector<Cluster> clusters(v, Cluster(w.distinct_ids));
  const auto capacity = [&](std::size_t t) { return t + 1 < v ? h : n - (v - 1) * h; };
  // Lines 3-6: slice t seeded with sorted row t*h.
  std::vector<bool> seed(n, false);
  for (std::size_t t = 0; t < v; ++t) {
    add_row(clusters[t], w, sorted[t * h]);
    seed[t * h] = true;
  }
  // Lines 7-13: every other row to the non-full slice whose cost grows least.
  for (std::size_t i = 0; i < n; ++i) {
    if (seed[i]) continue;
    std::size_t best = v;
    std::int64_t best_cost = 0;
    for (std::size_t t = 0; t < v; ++t) {
      if (clusters[t].rows.size() >= capacity(t)) continue;
      const std::int64_t cost = added_cost(clusters[t], w, sorted[i]);
      if (best == v || cost < best_cost) {
        best = t;
        best_cost = cost;
      }
    }
    add_row(clusters[best], w, sorted[i]);
  }
  std::vector<std::size_t> out;
  out.reserve(n);
  for (const Cluster& s : clusters) out.insert(out.end(), s.rows.begin(), s.rows.end());
  return out;
}

std::vector<std::size_t> local_identity(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

void check_height(std::uint32_t slice_height) {
  if (slice_height == 0) throw_invalid("bar: slice height is 0");
}

}  // namespace

double bar_objective(const CsrMatrix<double>& m, std::span<const std::int32_t> order,
                     std::uint32_t slice_height) {
  check_height(slice_height);
  permute_rows(m, order);  // validates the permutation
  std::int64_t cost = 0;
  for (std::size_t first = 0; first < order.size(); first += slice_height) {
    const std::span<const std::int32_t> slice =
        order.subspan(first, std::min<std::size_t>(slice_height, order.size() - first));
    const WindowRows w = index_rows(m, slice);
    cost += slices_cost(w, local_identity(slice.size()), slice_height).phi_terms;
  }
  return static_cast<double>(slice_height) / kBarWarpSize * static_cast<double>(cost);
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
  const std::size_t windows = (order.size() + window - 1) / window;
  // Windows are independent (each rewrites only its own rows of `order`): oneTBB runs them in
  // parallel, and the result does not depend on the schedule.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, windows, 1),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t index = range.begin(); index < range.end(); ++index) {
                        const std::size_t first = index * window;
                        const std::span<std::int32_t> rows(order.data() + first,
                                                           std::min(window, order.size() - first));
                        const WindowRows w = index_rows(m, rows);
                        const std::vector<std::size_t> greedy = greedy_window(w, slice_height);
                        // Slices align with windows, so Phi and the layout's sizes are sums
                        // over windows: keeping the identity unless the greedy clustering has
                        // a lower Phi and is no larger keeps the whole no worse than the
                        // identity in Phi, and the BRO-ELL layout of the BAR order no larger
                        // than the identity's (the bound the rules' device bytes use).
                        const SlicesCost greedy_cost = slices_cost(w, greedy, slice_height);
                        const SlicesCost identity_cost =
                            slices_cost(w, local_identity(rows.size()), slice_height);
                        if (greedy_cost.phi_terms < identity_cost.phi_terms &&
                            greedy_cost.no_larger_than(identity_cost)) {
                          const std::vector<std::int32_t> original(rows.begin(), rows.end());
                          for (std::size_t i = 0; i < greedy.size(); ++i)
                            rows[i] = original[greedy[i]];
                        }
                      }
                    });
  return order;
}

}  // namespace spmvd::bro
