#include "core/plan_partition.hpp"

#include <string_view>

namespace spmvd {
namespace {

std::string shape_problem(const PlanPartition& partition, std::string_view kind,
                          std::int64_t rows) {
  if (partition.kind != kind)
    return "its kind is '" + partition.kind + "', this build needs '" + std::string(kind) + "'";
  if (static_cast<std::int64_t>(partition.entries.size()) != rows)
    return "it has " + std::to_string(partition.entries.size()) + " entries, the matrix has " +
           std::to_string(rows) + " rows";
  return {};
}

}  // namespace

std::string permutation_problem(const PlanPartition& partition, std::string_view kind,
                                std::int64_t rows) {
  if (std::string problem = shape_problem(partition, kind, rows); !problem.empty()) return problem;
  std::vector<bool> seen(static_cast<std::size_t>(rows), false);
  for (std::size_t i = 0; i < partition.entries.size(); ++i) {
    const std::int32_t row = partition.entries[i];
    if (row < 0 || row >= rows)
      return "entry " + std::to_string(i) + " is " + std::to_string(row) + ", outside 0.." +
             std::to_string(rows - 1);
    if (seen[static_cast<std::size_t>(row)])
      return "entry " + std::to_string(i) + " repeats row " + std::to_string(row);
    seen[static_cast<std::size_t>(row)] = true;
  }
  return {};
}

std::string labels_problem(const PlanPartition& partition, std::string_view kind, std::int64_t rows,
                           std::int32_t parts, std::int64_t max_rows_per_label) {
  if (std::string problem = shape_problem(partition, kind, rows); !problem.empty()) return problem;
  if (parts < 1) return "a partition into " + std::to_string(parts) + " parts";
  std::vector<std::int64_t> size(static_cast<std::size_t>(parts), 0);
  for (std::size_t i = 0; i < partition.entries.size(); ++i) {
    const std::int32_t label = partition.entries[i];
    if (label < 0 || label >= parts)
      return "row " + std::to_string(i) + " is in part " + std::to_string(label) + ", outside 0.." +
             std::to_string(parts - 1);
    if (++size[static_cast<std::size_t>(label)] > max_rows_per_label)
      return "part " + std::to_string(label) + " has more than " +
             std::to_string(max_rows_per_label) + " rows";
  }
  return {};
}

}  // namespace spmvd
