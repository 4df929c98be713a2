#pragma once
// The feature vector of a matrix as matrix_stats and spmv-bench print it: dimensions, row
// length statistics, empty rows, a summary of the row-length distribution function (DF, paper
// 000 Sec. 4.1: how many distinct lengths, and the most common ones) and the fingerprint.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// The `top` most common row lengths, most rows first (ties: shorter length first).
std::vector<RowLengthCount> most_common_lengths(const MatrixFeatures& features, std::size_t top);

nlohmann::json features_to_json(const MatrixFeatures& features, const Fingerprint& fingerprint,
                                std::size_t top);
// Aligned "key  value" lines.
void print_features(std::ostream& out, const MatrixFeatures& features,
                    const Fingerprint& fingerprint, std::size_t top);

}  // namespace spmvd
