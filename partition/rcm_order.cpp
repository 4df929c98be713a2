#include "partition/rcm_order.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/cuthill_mckee_ordering.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <iterator>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace spmvd {
namespace {

// The pattern of A + A^T without the diagonal, each vertex's neighbours ascending and unique:
// the undirected graph RCM orders, stored as a CSR adjacency.
struct SymmetricPattern {
  std::vector<std::int64_t> offsets;  // vertices + 1
  std::vector<std::uint32_t> neighbours;
};

SymmetricPattern symmetric_pattern(const CsrMatrix<double>& m) {
  const auto n = static_cast<std::size_t>(m.rows);
  std::vector<std::int64_t> bounds(n + 1, 0);
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
      const auto c = static_cast<std::size_t>(m.col_indices[static_cast<std::size_t>(k)]);
      if (c == static_cast<std::size_t>(r)) continue;
      ++bounds[static_cast<std::size_t>(r) + 1];
      ++bounds[c + 1];
    }
  for (std::size_t v = 0; v < n; ++v) bounds[v + 1] += bounds[v];
  // Both directions of every entry: an entry (r, c) with (c, r) also present lands twice in
  // each list, removed by the unique below.
  std::vector<std::uint32_t> both(static_cast<std::size_t>(bounds[n]));
  std::vector<std::int64_t> cursor(bounds.begin(), bounds.end() - 1);
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
      const auto c = static_cast<std::size_t>(m.col_indices[static_cast<std::size_t>(k)]);
      if (c == static_cast<std::size_t>(r)) continue;
      both[static_cast<std::size_t>(cursor[static_cast<std::size_t>(r)]++)] =
          static_cast<std::uint32_t>(c);
      both[static_cast<std::size_t>(cursor[c]++)] = static_cast<std::uint32_t>(r);
    }
  std::vector<std::int64_t> unique_lengths(n, 0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t v = range.begin(); v < range.end(); ++v) {
                        const auto first = both.begin() + bounds[v];
                        const auto last = both.begin() + bounds[v + 1];
                        std::sort(first, last);
                        unique_lengths[v] = std::unique(first, last) - first;
                      }
                    });
  SymmetricPattern p;
  p.offsets.assign(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) p.offsets[v + 1] = p.offsets[v] + unique_lengths[v];
  p.neighbours.resize(static_cast<std::size_t>(p.offsets[n]));
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t v = range.begin(); v < range.end(); ++v)
                        std::copy_n(both.begin() + bounds[v], unique_lengths[v],
                                    p.neighbours.begin() + p.offsets[v]);
                    });
  return p;
}

// The pattern's edges (v, neighbour) in CSR order, sorted by source as Boost's
// edges_are_sorted constructor requires, generated without a vector of pairs.
class PatternEdgeIterator
    : public boost::iterator_facade<PatternEdgeIterator, std::pair<std::uint32_t, std::uint32_t>,
                                    std::forward_iterator_tag,
                                    std::pair<std::uint32_t, std::uint32_t>> {
 public:
  PatternEdgeIterator() = default;
  PatternEdgeIterator(const SymmetricPattern& p, std::int64_t position)
      : pattern_(&p), position_(position) {
    skip_finished_vertices();
  }

 private:
  friend class boost::iterator_core_access;
  void skip_finished_vertices() {
    const auto n = static_cast<std::int64_t>(pattern_->offsets.size()) - 1;
    while (vertex_ < n && pattern_->offsets[static_cast<std::size_t>(vertex_) + 1] <= position_)
      ++vertex_;
  }
  void increment() {
    ++position_;
    skip_finished_vertices();
  }
  bool equal(const PatternEdgeIterator& other) const { return position_ == other.position_; }
  std::pair<std::uint32_t, std::uint32_t> dereference() const {
    return {static_cast<std::uint32_t>(vertex_),
            pattern_->neighbours[static_cast<std::size_t>(position_)]};
  }

  const SymmetricPattern* pattern_ = nullptr;
  std::int64_t position_ = 0;
  std::int64_t vertex_ = 0;
};

using PatternGraph =
    boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                       boost::no_property, std::uint32_t, std::uint64_t>;

}  // namespace

std::vector<std::int32_t> rcm_order(const CsrMatrix<double>& m) {
  if (m.rows != m.cols)
    throw_invalid("rcm_order: the matrix is " + std::to_string(m.rows) + " x " +
                  std::to_string(m.cols) +
                  "; RCM renumbers rows and columns alike and needs a square matrix");
  if (m.rows > kMaxDimension)
    throw_invalid("rcm_order: " + std::to_string(m.rows) + " rows, at most " +
                  std::to_string(kMaxDimension));
  if (m.rows == 0) return {};
  const SymmetricPattern pattern = symmetric_pattern(m);
  // Every edge is stored in both directions, so the directed CSR graph's out-edges are the
  // undirected graph's edges and its out-degree its degree (what Boost's default degree map
  // and the pseudo-peripheral search read).
  const PatternGraph graph(boost::edges_are_sorted, PatternEdgeIterator(pattern, 0),
                           PatternEdgeIterator(pattern, pattern.offsets.back()),
                           static_cast<std::uint32_t>(m.rows),
                           static_cast<std::uint64_t>(pattern.offsets.back()));
  std::vector<std::uint32_t> order(static_cast<std::size_t>(m.rows));
  // Cuthill-McKee written back to front: the reverse order.
  boost::cuthill_mckee_ordering(graph, order.rbegin());
  return {order.begin(), order.end()};
}

}  // namespace spmvd
