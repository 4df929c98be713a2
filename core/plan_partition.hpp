#pragma once
// A partition or row order a format computed from the matrix's structure while building (issue
// 16, "Reordering as a plan property"): METIS's part of every row (cuda_ehyb), an RCM
// permutation (cuda_bro_ell). Computing one costs seconds on large matrices, so the tuned plan
// carries the winner's, the plan cache stores it beside the plan (db/: the plan_partitions
// table), and a cache hit hands it to the build, which checks it and uses it instead of
// computing it again. The format names what the entries are and what they depend on in `kind`
// ("rcm", "metis_kway/264"): a stored partition of another kind is not used.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spmvd {

struct PlanPartition {
  std::string kind;                   // the format's name for what the entries mean
  std::vector<std::int32_t> entries;  // one per row (a label or an original row index)
  friend bool operator==(const PlanPartition&, const PlanPartition&) = default;
};

// A plan's partition as plans and built operators share it: immutable, one copy however many
// hold it (a permutation of tens of millions of rows), compared by value. Empty where the plan
// has none.
class PlanPartitionRef {
 public:
  PlanPartitionRef() = default;
  PlanPartitionRef(std::shared_ptr<const PlanPartition> partition)  // NOLINT: a plain wrapper
      : partition_(std::move(partition)) {}
  const std::shared_ptr<const PlanPartition>& shared() const noexcept { return partition_; }
  const PlanPartition* get() const noexcept { return partition_.get(); }
  const PlanPartition* operator->() const noexcept { return partition_.get(); }
  const PlanPartition& operator*() const noexcept { return *partition_; }
  explicit operator bool() const noexcept { return partition_ != nullptr; }
  friend bool operator==(const PlanPartitionRef& a, const PlanPartitionRef& b) {
    if (a.partition_ == b.partition_) return true;
    return a.partition_ && b.partition_ && *a.partition_ == *b.partition_;
  }

 private:
  std::shared_ptr<const PlanPartition> partition_;
};

// The checks a build runs on a stored partition before trusting it; each returns "" when it
// passes, else why not (for the warning that precedes computing it again). O(entries).
// `kind` is the expected kind and `rows` the matrix's rows.
// A permutation of 0 .. rows-1 (an order: entry i is the original row placed at i).
std::string permutation_problem(const PlanPartition& partition, std::string_view kind,
                                std::int64_t rows);
// A label in [0, parts) for every row, and no label on more than max_rows_per_label rows.
std::string labels_problem(const PlanPartition& partition, std::string_view kind, std::int64_t rows,
                           std::int32_t parts, std::int64_t max_rows_per_label);

}  // namespace spmvd
