#include "kernels/formats/cuda_bro_coo/cuda_bro_coo_rules.hpp"

#include <string>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "kernels/formats/common/bro_stream.hpp"
#include "kernels/formats/common/rules_support.hpp"

namespace spmvd {

BroCooFeatures compute_bro_coo_features(const CsrMatrix<double>& m) {
  BroCooFeatures f;
  for (const std::uint32_t rounds : kBroCooIntervalRounds) {
    const bro::BroCooSize size = bro::bro_coo_size(m, rounds);
    f.intervals.push_back(size.intervals);
    f.stream_words.push_back(size.stream_words);
  }
  return f;
}

std::optional<BroCooFeatures> cuda_bro_coo_features(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_bro_coo");
  if (it == features.format_features.end()) return std::nullopt;
  BroCooFeatures f = it->second.as<BroCooFeatures>("features of cuda_bro_coo");
  if (f.intervals.size() != kBroCooIntervalRounds.size() ||
      f.stream_words.size() != kBroCooIntervalRounds.size())
    throw_invalid("features of cuda_bro_coo: sizes for " + std::to_string(f.intervals.size()) +
                  " and " + std::to_string(f.stream_words.size()) + " intervals, expected " +
                  std::to_string(kBroCooIntervalRounds.size()));
  return f;
}

std::size_t bro_coo_rounds_index(std::string_view owner, std::uint32_t interval_rounds) {
  for (std::size_t i = 0; i < kBroCooIntervalRounds.size(); ++i)
    if (kBroCooIntervalRounds[i] == interval_rounds) return i;
  std::string allowed;
  for (const std::uint32_t r : kBroCooIntervalRounds)
    allowed += (allowed.empty() ? "" : ", ") + std::to_string(r);
  throw_invalid(std::string(owner) + ": interval_rounds " + std::to_string(interval_rounds) +
                " is not one of " + allowed);
}

std::uint64_t bro_coo_layout_bytes(const BroCooFeatures& sizes, std::size_t index,
                                   std::int64_t entries, Precision precision) {
  const auto intervals = static_cast<std::uint64_t>(sizes.intervals.at(index));
  const auto words = static_cast<std::uint64_t>(sizes.stream_words.at(index));
  return words * sizeof(std::uint32_t) +
         intervals * (2 * sizeof(std::int32_t) + sizeof(std::uint8_t)) +
         (intervals + 1) * sizeof(std::int64_t) +
         static_cast<std::uint64_t>(entries) * (sizeof(ColIndex) + value_bytes(precision));
}

bool CudaBroCooRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                 Precision precision, std::uint64_t memory_budget_bytes) const {
  // Without its sizes it offers no candidate and is no choice (as DIA without its diagonals).
  if (!device.is_gpu || !cuda_bro_coo_features(features)) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaBroCooRules::candidates(const MatrixFeatures& features,
                                                   const DeviceInfo&) const {
  const std::optional<BroCooFeatures> own = cuda_bro_coo_features(features);
  if (!own) return {};
  std::vector<Candidate> out;
  for (std::size_t i = 0; i < kBroCooIntervalRounds.size(); ++i)
    out.push_back(Candidate{
        .format = id(),
        .params = FieldSet::of(CudaBroCooParams{.interval_rounds = kBroCooIntervalRounds[i]}),
        .launch = {.block_size = kBroCooBlockSize,
                   .threads_per_row = 0,
                   .grid_size = blocks_for(static_cast<std::uint64_t>(own->intervals[i]),
                                           kBroCooBlockSize / 32)}});
  return out;
}

std::uint64_t CudaBroCooRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                            const Candidate& candidate) const {
  const std::size_t index =
      bro_coo_rounds_index("cuda_bro_coo", params_of(candidate).interval_rounds);
  const std::optional<BroCooFeatures> own = cuda_bro_coo_features(features);
  if (!own) throw_invalid("cuda_bro_coo: device bytes need its features (none computed)");
  return bro_coo_layout_bytes(*own, index, features.nnz, precision);
}

std::optional<FieldSet> CudaBroCooRules::own_features(const CsrMatrix<double>& matrix,
                                                      const MatrixFeatures&) const {
  return FieldSet::of(compute_bro_coo_features(matrix));
}

}  // namespace spmvd
