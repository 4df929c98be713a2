#include "partition/opa.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// T(j, m): the cost of the block of sets [j, m), j < m (boundaries as prefix positions 0..M').
class RangeCost {
 public:
  RangeCost(const RowVectorSets& sets, const BlockCost& cost) : sets_(sets), cost_(cost) {}
  double operator()(std::int64_t j, std::int64_t m) const {
    return cost_.time_ms(sets_.range(j, m));
  }

 private:
  const RowVectorSets& sets_;
  const BlockCost& cost_;
};

// Set ends of the partition from the last boundary of every prefix (`last[m]` = the start of
// the block that ends at m).
std::vector<std::int64_t> ends_from_last_boundaries(const std::vector<std::int64_t>& last,
                                                    std::int64_t n) {
  std::vector<std::int64_t> ends;
  for (std::int64_t m = n; m > 0; m = last[m]) ends.push_back(m);
  std::reverse(ends.begin(), ends.end());
  return ends;
}

// Theorem 5.3 with k dropped: F(m) = min_{j < m} F(j) + T(j, m). O(n^2).
std::vector<std::int64_t> quadratic_uncapped(const RangeCost& t, std::int64_t n) {
  std::vector<double> f(n + 1, kInfinity);
  std::vector<std::int64_t> last(n + 1, 0);
  f[0] = 0.0;
  for (std::int64_t m = 1; m <= n; ++m) {
    for (std::int64_t j = 0; j < m; ++j) {
      const double q = f[j] + t(j, m);
      if (q < f[m]) {
        f[m] = q;
        last[m] = j;
      }
    }
  }
  return ends_from_last_boundaries(last, n);
}

// The same recurrence when T satisfies the quadrangle inequality: if a later candidate
// boundary c2 > c1 is at least as good as c1 for the block ending at t, it stays so for every
// t' > t (add T(c1,t) + T(c2,t') <= T(c1,t') + T(c2,t) to F(c2) + T(c2,t) <= F(c1) + T(c1,t)).
// So the candidates that can still win form a queue, each owning an interval of targets, and a
// new candidate takes over a suffix found by binary search. O(n log n) evaluations.
std::vector<std::int64_t> quadrangle_uncapped(const RangeCost& t, std::int64_t n) {
  struct Candidate {
    std::int64_t boundary;
    std::int64_t from;  // the first target m this candidate is best for
  };
  std::vector<double> f(n + 1, kInfinity);
  std::vector<std::int64_t> last(n + 1, 0);
  std::vector<Candidate> queue;
  queue.reserve(n + 1);
  std::size_t head = 0;
  f[0] = 0.0;
  queue.push_back({0, 1});
  for (std::int64_t m = 1; m <= n; ++m) {
    while (head + 1 < queue.size() && queue[head + 1].from <= m) ++head;
    const std::int64_t j = queue[head].boundary;
    f[m] = f[j] + t(j, m);
    last[m] = j;
    if (m == n) break;
    const auto newer_wins = [&](std::int64_t older, std::int64_t target) {
      return f[m] + t(m, target) <= f[older] + t(older, target);
    };
    bool placed = false;
    while (queue.size() > head) {
      const Candidate back = queue.back();
      const std::int64_t start = std::max(back.from, m + 1);
      if (newer_wins(back.boundary, start)) {
        queue.pop_back();
        continue;
      }
      std::int64_t lo = start + 1, hi = n + 1;  // first target in (start, n] the newer wins
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (newer_wins(back.boundary, mid)) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      if (lo <= n) queue.push_back({m, lo});
      placed = true;
      break;
    }
    if (!placed) queue.push_back({m, m + 1});
  }
  return ends_from_last_boundaries(last, n);
}

// One layer of Theorem 5.3: cur[m] = min_{k-1 <= j < m} prev[j] + T(j, m) for m in [lo, hi],
// knowing the best j lies in [opt_lo, opt_hi] (divide and conquer: with the quadrangle
// inequality the best j is non-decreasing in m). O(n log n) per layer.
void quadrangle_layer(const RangeCost& t, const std::vector<double>& prev, std::vector<double>& cur,
                      std::vector<std::int64_t>& arg, std::int64_t lo, std::int64_t hi,
                      std::int64_t opt_lo, std::int64_t opt_hi) {
  while (lo <= hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    double best = kInfinity;
    std::int64_t best_j = opt_lo;
    for (std::int64_t j = opt_lo; j <= std::min(mid - 1, opt_hi); ++j) {
      if (prev[j] == kInfinity) continue;
      const double q = prev[j] + t(j, mid);
      if (q < best) {
        best = q;
        best_j = j;
      }
    }
    cur[mid] = best;
    arg[mid] = best_j;
    quadrangle_layer(t, prev, cur, arg, lo, mid - 1, opt_lo, best_j);
    lo = mid + 1;  // the right half, iteratively
    opt_lo = best_j;
  }
}

// Theorem 5.3 layer by layer up to k_max blocks; Algorithm 2 picks the best k (fewest on ties).
// `paper_loops`: every j in [k-1, m-1] for every m (Algorithm 1's loops); otherwise divide and
// conquer (quadrangle inequality).
std::vector<std::int64_t> layered(const RangeCost& t, std::int64_t n, std::int64_t k_max,
                                  bool paper_loops) {
  // arg[k][m]: M_{k-1} of the best partition of sets [0, m) into k blocks (Algorithm 1's D).
  std::vector<std::vector<std::int64_t>> arg(k_max + 1);
  std::vector<double> prev(n + 1, kInfinity), cur(n + 1, kInfinity);
  for (std::int64_t m = 1; m <= n; ++m) prev[m] = t(0, m);  // Cost(m, 1) = T(R_{1,m})
  arg[1].assign(n + 1, 0);
  double best_cost = prev[n];
  std::int64_t best_k = 1;
  for (std::int64_t k = 2; k <= k_max; ++k) {
    std::fill(cur.begin(), cur.end(), kInfinity);
    arg[k].assign(n + 1, 0);
    if (paper_loops) {
      for (std::int64_t m = k; m <= n; ++m) {
        for (std::int64_t j = k - 1; j <= m - 1; ++j) {
          const double q = prev[j] + t(j, m);
          if (q < cur[m]) {
            cur[m] = q;
            arg[k][m] = j;
          }
        }
      }
    } else {
      quadrangle_layer(t, prev, cur, arg[k], k, n, k - 1, n - 1);
    }
    if (cur[n] < best_cost) {
      best_cost = cur[n];
      best_k = k;
    }
    std::swap(prev, cur);
  }
  // Algorithm 2: walk D back from (M', k).
  std::vector<std::int64_t> ends;
  for (std::int64_t k = best_k, m = n; k >= 1; --k) {
    ends.push_back(m);
    m = arg[k][m];
  }
  std::reverse(ends.begin(), ends.end());
  return ends;
}

}  // namespace

BlockedEllBlockCost::BlockedEllBlockCost(const BlockedEllTimeCoefficients& coefficients)
    : coefficients_(coefficients) {
  if (coefficients.sm_elements_per_ms <= 0.0 || coefficients.lower_limit_rows < 0) {
    throw_invalid("BlockedEllBlockCost: f_p must be positive and L not negative");
  }
}

// Quadrangle inequality of T(j, m) = w_m g(P_m - P_j) / f_p, g(x) = max(x, L), w the set lengths
// (ascending), P the prefix row counts: for a <= b <= c <= d the intervals [a, d] and [b, c] have
// the same total length as [a, c] and [b, d] with the extremes on the right side, so a convex g
// gives g(a,c) + g(b,d) <= g(a,d) + g(b,c); with w_d = w_c + delta, delta >= 0,
//   w_c g(a,c) + w_d g(b,d) = w_c [g(a,c) + g(b,d)] + delta g(b,d)
//                          <= w_c [g(a,d) + g(b,c)] + delta g(a,d) = w_d g(a,d) + w_c g(b,c),
// using g(b,d) <= g(a,d) (g is non-decreasing). partition/tests/opa_test.cpp checks it exhaustively.
double BlockedEllBlockCost::time_ms(const RowVectorSetRange& block) const {
  return partition_compute_time_ms({.rows = block.rows, .width = block.width}, coefficients_);
}

OptimalPartition optimal_partition(const RowVectorSets& sets, const BlockCost& cost,
                                   const OpaOptions& options) {
  if (options.max_blocks < 0) {
    throw_invalid("optimal_partition: max_blocks " + std::to_string(options.max_blocks) +
                  " is negative");
  }
  OptimalPartition result;
  const std::int64_t n = sets.size();
  if (n == 0) return result;
  const RangeCost t(sets, cost);
  const std::int64_t k_max = options.max_blocks == 0 ? n : std::min(options.max_blocks, n);
  const bool quadrangle =
      options.method == OpaMethod::automatic && cost.satisfies_quadrangle_inequality();
  if (options.method == OpaMethod::paper_cubic) {
    result.set_ends = layered(t, n, k_max, /*paper_loops=*/true);
  } else if (k_max < n) {
    result.set_ends = layered(t, n, k_max, /*paper_loops=*/!quadrangle);
  } else {
    result.set_ends = quadrangle ? quadrangle_uncapped(t, n) : quadratic_uncapped(t, n);
  }
  result.upper_lengths.reserve(result.set_ends.size());
  for (const std::int64_t end : result.set_ends)
    result.upper_lengths.push_back(sets.length(end - 1));
  result.cost_ms = partition_cost_ms(sets, cost, result.set_ends);
  return result;
}

double partition_cost_ms(const RowVectorSets& sets, const BlockCost& cost,
                         const std::vector<std::int64_t>& set_ends) {
  if (sets.size() > 0 && (set_ends.empty() || set_ends.back() != sets.size())) {
    throw_invalid("partition_cost_ms: the last set end must be " + std::to_string(sets.size()));
  }
  double total = 0.0;
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < set_ends.size(); ++i) {
    if (set_ends[i] <= begin) {
      throw_invalid("partition_cost_ms: set end " + std::to_string(i) + " (" +
                    std::to_string(set_ends[i]) + ") must exceed the one before (" +
                    std::to_string(begin) + ")");
    }
    total += cost.time_ms(sets.range(begin, set_ends[i]));
    begin = set_ends[i];
  }
  return total;
}

}  // namespace spmvd
