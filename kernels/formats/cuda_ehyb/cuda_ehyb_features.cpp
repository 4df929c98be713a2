#include "kernels/formats/cuda_ehyb/cuda_ehyb_features.hpp"

#include <algorithm>
#include <vector>

namespace spmvd {

CudaEhybFeatures compute_cuda_ehyb_features(const CsrMatrix<double>& matrix) {
  CudaEhybFeatures out;
  if (matrix.rows != matrix.cols || matrix.rows == 0) return out;
  const std::int64_t samples = std::min(kEhybGrowthSamples, matrix.rows);
  double ratio_sum = 0.0;
  std::int64_t counted = 0;
  std::vector<ColIndex> frontier, next, reached;
  for (std::int64_t s = 0; s < samples; ++s) {
    const auto start = static_cast<ColIndex>(s * matrix.rows / samples);
    frontier.assign(1, start);
    reached.clear();
    std::int64_t walks = 0;
    for (int hop = 0; hop < 3 && walks < kEhybGrowthPathCap; ++hop) {
      next.clear();
      for (const ColIndex v : frontier) {
        for (RowOffset k = matrix.row_offsets[static_cast<std::size_t>(v)];
             k < matrix.row_offsets[static_cast<std::size_t>(v) + 1] && walks < kEhybGrowthPathCap;
             ++k) {
          const ColIndex c = matrix.col_indices[static_cast<std::size_t>(k)];
          if (c == v) continue;
          ++walks;
          next.push_back(c);
          if (c != start) reached.push_back(c);
        }
        if (walks >= kEhybGrowthPathCap) break;
      }
      frontier.swap(next);
    }
    if (walks == 0) continue;
    std::sort(reached.begin(), reached.end());
    const auto distinct = std::unique(reached.begin(), reached.end()) - reached.begin();
    ratio_sum += static_cast<double>(distinct) / static_cast<double>(walks);
    ++counted;
  }
  out.neighbourhood_growth = counted > 0 ? ratio_sum / static_cast<double>(counted) : 0.0;
  return out;
}

std::optional<CudaEhybFeatures> cuda_ehyb_features(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_ehyb");
  if (it == features.format_features.end()) return std::nullopt;
  return it->second.as<CudaEhybFeatures>("features of cuda_ehyb");
}

}  // namespace spmvd
