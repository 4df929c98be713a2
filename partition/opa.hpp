#pragma once
// The optimal partitioning algorithm (OPA) of paper 000 (Sec. 5.4-5.5, Theorem 5.3,
// Algorithms 1-2): split the non-empty row vector sets R_1..R_M' of a DF into k blocks of
// consecutive sets C_1..C_k (Theorems 5.1-5.2 show an optimal partition has this shape),
// choosing k and the boundaries M_1 < ... < M_{k-1} that minimise
//   Cost(P) = sum_i T_c(C_i).
// The block cost T_c is a BlockCost, so that the calibrated model of this GPU can supply it;
// BlockedEllBlockCost is the paper's own Sec. 5.3 form with its coefficients passed in.
//
// Complexity, for M' non-empty sets (M' < sqrt(2 NNZ): M' distinct positive lengths need at
// least 1 + 2 + ... + M' non-zeros) and k_max the cap on k:
//   - a cost that satisfies the quadrangle inequality (BlockCost::satisfies_quadrangle_inequality;
//     the paper's form does, see opa.cpp): exact, O(M' log M') cost evaluations without a cap on
//     k (monotone candidate queue: the best last boundary is non-decreasing in m), and
//     O(k_max M' log M') with one (divide and conquer per layer of Theorem 5.3);
//   - any other cost: exact, O(M'^2) evaluations without a cap (the recurrence of Theorem 5.3
//     with k dropped: the cost has no term in k, so min over k of Cost(M', k) is a
//     one-dimensional recurrence over the last boundary), O(k_max M'^2) with one. Since
//     M'^2 < 2 NNZ, that is O(NNZ) evaluations at worst;
//   - OpaMethod::paper_cubic: Algorithms 1-2 as printed, O(M'^3) (O(k_max M'^2) with a cap),
//     kept as the reference the faster paths are tested against.
// Every path is exact, so no approximate merging of sets (paper 000 Sec. 5.5 merges sets of
// similar width when M' > 100) is needed. Memory: O(M') without a cap, O(k_max M') with one.
// Measured (partition-bench, 50M non-zeros, power law alpha 2.1, M' = 2946, the shared 2-core
// development machine, 2026-11-23): 1.2 ms on the quadrangle path, 75-170 ms quadratic.
// Thread safety: pure function; the BlockCost is only read (time_ms must be const-safe).

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "models/blocked_ell_time_model.hpp"
#include "partition/row_vector_sets.hpp"

namespace spmvd {

// T_c(C) of one block C of consecutive row vector sets, in ms.
class BlockCost {
 public:
  virtual ~BlockCost() = default;
  virtual double time_ms(const RowVectorSetRange& block) const = 0;
  // Whether, with T(i, j) = time_ms(sets.range(i, j)), every a <= b <= c <= d has
  //   T(a, c) + T(b, d) <= T(a, d) + T(b, c)
  // (the quadrangle inequality). Declaring it lets OPA take its O(M' log M') path; a cost that
  // declares it falsely gets a partition that may not be optimal.
  virtual bool satisfies_quadrangle_inequality() const { return false; }
};

// Paper 000 Sec. 5.3: T_c(C) = W(C) L / f_p where N(C) <= L, E(C) / f_p otherwise
// (models/blocked_ell_time_model.hpp partition_compute_time_ms; L and f_p from the caller, for
// the paper's K20c L = 192). Satisfies the quadrangle inequality.
class BlockedEllBlockCost final : public BlockCost {
 public:
  // Throws Error(invalid_argument) when f_p <= 0 or L < 0.
  explicit BlockedEllBlockCost(const BlockedEllTimeCoefficients& coefficients);
  double time_ms(const RowVectorSetRange& block) const override;
  bool satisfies_quadrangle_inequality() const override { return true; }

 private:
  BlockedEllTimeCoefficients coefficients_;
};

// A block cost from any callable, e.g. a calibrated model's prediction.
class FunctionBlockCost final : public BlockCost {
 public:
  FunctionBlockCost(std::function<double(const RowVectorSetRange&)> time_ms,
                    bool satisfies_quadrangle_inequality)
      : time_ms_(std::move(time_ms)), quadrangle_(satisfies_quadrangle_inequality) {}
  double time_ms(const RowVectorSetRange& block) const override { return time_ms_(block); }
  bool satisfies_quadrangle_inequality() const override { return quadrangle_; }

 private:
  std::function<double(const RowVectorSetRange&)> time_ms_;
  bool quadrangle_;
};

enum class OpaMethod {
  automatic,    // the quadrangle-inequality path where the cost declares it, else quadratic
  quadratic,    // O(M'^2) for any cost
  paper_cubic,  // Algorithms 1-2 of paper 000 as printed, O(M'^3)
};

struct OpaOptions {
  std::int64_t max_blocks = 0;  // cap on k; 0: none (Algorithm 2 takes the best k of all)
  OpaMethod method = OpaMethod::automatic;
  friend bool operator==(const OpaOptions&, const OpaOptions&) = default;
};

struct OptimalPartition {
  // M_1 < M_2 < ... < M_k: block i holds the rows of length in (M_{i-1}, M_i], M_0 = 0. Each
  // M_i is the length of a non-empty set, so M_i = W(C_i) and M_k is the longest row. k =
  // size(); empty when the DF has no non-empty set.
  std::vector<std::int64_t> upper_lengths;
  // The same boundaries as set indices: block i holds sets [set_ends[i-1], set_ends[i]).
  std::vector<std::int64_t> set_ends;
  double cost_ms = 0.0;  // Cost(P) = sum_i T_c(C_i)
  friend bool operator==(const OptimalPartition&, const OptimalPartition&) = default;
};

// OPA over `sets`. Ties between equal costs go to the fewer blocks where a cap is given (as
// Algorithm 2's strict `<`). Throws Error(invalid_argument) on a negative max_blocks.
OptimalPartition optimal_partition(const RowVectorSets& sets, const BlockCost& cost,
                                   const OpaOptions& options = {});

// Cost(P) of the partition with these set boundaries (set_ends ascending, the last == M').
// Throws Error(invalid_argument) when they are not.
double partition_cost_ms(const RowVectorSets& sets, const BlockCost& cost,
                         const std::vector<std::int64_t>& set_ends);

}  // namespace spmvd
