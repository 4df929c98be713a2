#include "partition/row_vector_sets.hpp"

#include <string>

#include "core/error.hpp"

namespace spmvd {

RowVectorSets::RowVectorSets(std::span<const RowLengthCount> sets) {
  lengths_.reserve(sets.size());
  prefix_rows_.reserve(sets.size() + 1);
  prefix_nnz_.reserve(sets.size() + 1);
  prefix_rows_.push_back(0);
  prefix_nnz_.push_back(0);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const RowLengthCount& set = sets[i];
    if (set.length <= 0 || set.rows <= 0 || (i > 0 && set.length <= sets[i - 1].length)) {
      throw_invalid("RowVectorSets: set " + std::to_string(i) + " {length " +
                    std::to_string(set.length) + ", rows " + std::to_string(set.rows) +
                    "} must have a positive length above the set before and rows > 0");
    }
    lengths_.push_back(set.length);
    prefix_rows_.push_back(prefix_rows_.back() + set.rows);
    prefix_nnz_.push_back(prefix_nnz_.back() + set.length * set.rows);
  }
}

}  // namespace spmvd
