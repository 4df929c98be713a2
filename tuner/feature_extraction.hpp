#pragma once
// Structural features of a CSR matrix (core/matrix_features.hpp): one pass over row_offsets
// plus one over the first/last column of each row, one over the columns for the x gathers
// (O(nnz)), then each registered format's own features (FormatRules::own_features: SELL's slice
// padding and sorted gathers, BSR's block counts, ...). No values read.

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd {

// effort: kernels/format_rules.hpp (thorough adds what only many multiplies pay back). A
// thorough pass appends the partitions it computed to size its reorderings to `partitions`,
// where given, for the matrix's builds to reuse (BuildSource::offer_partition).
MatrixFeatures extract_features(
    const CsrMatrix<double>& m, const FormatRegistry& registry = format_registry(),
    FeatureEffort effort = FeatureEffort::standard,
    std::vector<std::shared_ptr<const PlanPartition>>* partitions = nullptr);

}  // namespace spmvd
