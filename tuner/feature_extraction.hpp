#pragma once
// Structural features of a CSR matrix (core/matrix_features.hpp): one pass over row_offsets
// plus one over the first/last column of each row, one over the columns for the x gathers
// (O(nnz)), then the own features of each registered format the pass is asked for
// (FormatRules::own_features: SELL's slice padding and sorted gathers, BSR's block counts, ...).
// No values read.

#include <functional>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd {

// The features every format reads: the DF, the row statistics and the x gathers.
MatrixFeatures common_features(const CsrMatrix<double>& m);

// effort: kernels/format_rules.hpp (thorough adds what only many multiplies pay back). A
// thorough pass appends the partitions it computed to size its reorderings to `partitions`,
// where given, for the matrix's builds to reuse (BuildSource::offer_partition).
// `computes_own`, given the common features, says which formats' hooks run (tuner.hpp
// repayable_formats: those whose build the expected multiplies could repay); the others are
// listed in MatrixFeatures::formats_left_out. Empty: every format's.
MatrixFeatures extract_features(
    const CsrMatrix<double>& m, const FormatRegistry& registry = format_registry(),
    FeatureEffort effort = FeatureEffort::standard,
    std::vector<std::shared_ptr<const PlanPartition>>* partitions = nullptr,
    const std::function<FormatFilter(const MatrixFeatures& common)>& computes_own = {});

// Computes the own features of the formats in f.formats_left_out that `computes_own` now
// accepts (all of them where it is empty) and takes them off the list: a later tuning
// expecting more multiplies, or a cached plan of a format left out. Returns how many formats
// it added.
std::size_t extend_features(const CsrMatrix<double>& m, const FormatRegistry& registry,
                            FeatureEffort effort, MatrixFeatures& f,
                            const FormatFilter& computes_own,
                            std::vector<std::shared_ptr<const PlanPartition>>* partitions = nullptr);

}  // namespace spmvd
