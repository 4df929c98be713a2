#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"

#include <map>
#include <string>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "kernels/formats/common/bar_reorder.hpp"
#include "kernels/formats/common/bro_stream.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"

namespace spmvd {

std::size_t bro_ell_choice_index(std::string_view owner, const CudaBroEllParams& params,
                                 std::uint32_t threads_per_row) {
  const BroEllChoice wanted{params, threads_per_row};
  for (std::size_t i = 0; i < kBroEllChoices.size(); ++i)
    if (kBroEllChoices[i] == wanted) return i;
  throw_invalid(std::string(owner) + ": slice_height " + std::to_string(params.slice_height) +
                ", variant " + std::to_string(params.variant) + ", reorder " +
                std::to_string(params.reorder) + ", threads_per_row " +
                std::to_string(threads_per_row) + " is not a BRO-ELL layout");
}

CsrMatrix<double> bro_ell_stream_rows(const CsrMatrix<double>& m, const BroEllChoice& choice,
                                      std::vector<std::int32_t>& order) {
  order.clear();
  if (choice.params.reorder == kBroReorderBar) {
    order = bro::bar_order(m, choice.params.slice_height / choice.threads_per_row);
    const CsrMatrix<double> permuted = bro::permute_rows(m, order);
    return choice.threads_per_row == 1 ? permuted
                                       : bro::split_rows(permuted, choice.threads_per_row);
  }
  return choice.threads_per_row == 1 ? m : bro::split_rows(m, choice.threads_per_row);
}

BroEllFeatures compute_bro_ell_features(const CsrMatrix<double>& m, std::int64_t hyb_ell_width) {
  // One walk a slice height gives every layout of it: the paper and hopper variants differ in
  // the multiplexing only (the same words), the split layouts are the walk's `split` sizes, and
  // BAR's are bounded by the identity order's (no BAR here: it is the builder's, O(nnz *
  // kBarWindowSlices), several times a walk).
  constexpr std::uint32_t kSplitParts = 4;
  for (const BroEllChoice& choice : kBroEllChoices)
    if (choice.threads_per_row != 1 && choice.threads_per_row != kSplitParts)
      throw_invalid("cuda_bro_ell: no size walk for " + std::to_string(choice.threads_per_row) +
                    " threads per row");
  std::map<std::uint32_t, bro::BroEllWalkSizes> walks;
  for (const BroEllChoice& choice : kBroEllChoices)
    if (!walks.contains(choice.params.slice_height))
      walks.emplace(
          choice.params.slice_height,
          bro::bro_ell_walk_sizes(m, choice.params.slice_height, kSplitParts, hyb_ell_width));
  BroEllFeatures f;
  f.hyb_ell_width = hyb_ell_width;
  for (const BroEllChoice& choice : kBroEllChoices) {
    const bro::BroEllWalkSizes& walk = walks.at(choice.params.slice_height);
    const bool split = choice.threads_per_row == kSplitParts;
    const bro::BroEllSize& size = split ? walk.split : walk.whole;
    const bro::BroEllSize& leading = split ? walk.leading_split : walk.leading;
    f.slices.push_back(size.slices);
    f.stream_words.push_back(size.stream_words);
    f.columns.push_back(size.columns);
    f.value_slots.push_back(size.value_slots);
    f.hyb_stream_words.push_back(leading.stream_words);
    f.hyb_columns.push_back(leading.columns);
    f.hyb_value_slots.push_back(leading.value_slots);
  }
  return f;
}

std::optional<BroEllFeatures> cuda_bro_ell_features(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_bro_ell");
  if (it == features.format_features.end()) return std::nullopt;
  BroEllFeatures f = it->second.as<BroEllFeatures>("features of cuda_bro_ell");
  for (const auto* v : {&f.slices, &f.stream_words, &f.columns, &f.value_slots, &f.hyb_stream_words,
                        &f.hyb_columns, &f.hyb_value_slots})
    if (v->size() != kBroEllChoices.size())
      throw_invalid("features of cuda_bro_ell: " + std::to_string(v->size()) +
                    " sizes, expected one per layout (" + std::to_string(kBroEllChoices.size()) +
                    ")");
  return f;
}

std::uint64_t bro_ell_layout_bytes(const BroEllFeatures& sizes, std::size_t index,
                                   std::int64_t rows, Precision precision) {
  const auto at = [&](const std::vector<std::int64_t>& v) {
    return static_cast<std::uint64_t>(v.at(index));
  };
  const std::uint64_t order = kBroEllChoices.at(index).params.reorder == kBroReorderBar
                                  ? static_cast<std::uint64_t>(rows) * sizeof(std::int32_t)
                                  : 0;
  return at(sizes.stream_words) * sizeof(std::uint32_t) + at(sizes.columns) +
         at(sizes.value_slots) * value_bytes(precision) +
         2 * (at(sizes.slices) + 1) * sizeof(std::int64_t) + order;
}

bool CudaBroEllRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                 Precision precision, std::uint64_t memory_budget_bytes) const {
  // Without its sizes it offers no candidate and is no choice (as DIA without its diagonals).
  if (!device.is_gpu || !cuda_bro_ell_features(features)) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaBroEllRules::candidates(const MatrixFeatures& features,
                                                   const DeviceInfo& device) const {
  // Without the sizes nothing bounds the stream (as DIA without its diagonals).
  if (!cuda_bro_ell_features(features)) return {};
  std::vector<Candidate> out;
  for (const BroEllChoice& choice : kBroEllChoices)
    out.push_back(
        Candidate{.format = id(),
                  .params = FieldSet::of(choice.params),
                  .launch = {.block_size = kBroBlockSize,
                             .threads_per_row = choice.threads_per_row,
                             .grid_size = CudaCsrVectorRules::grid_size(
                                 features.rows, choice.threads_per_row, kBroBlockSize, device)}});
  return out;
}

std::uint64_t CudaBroEllRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                            const Candidate& candidate) const {
  const std::size_t index =
      bro_ell_choice_index("cuda_bro_ell", params_of(candidate), candidate.launch.threads_per_row);
  const std::optional<BroEllFeatures> own = cuda_bro_ell_features(features);
  if (!own) throw_invalid("cuda_bro_ell: device bytes need its features (none computed)");
  return bro_ell_layout_bytes(*own, index, features.rows, precision);
}

std::optional<FieldSet> CudaBroEllRules::own_features(const CsrMatrix<double>& matrix,
                                                      const MatrixFeatures& common) const {
  return FieldSet::of(
      compute_bro_ell_features(matrix, CudaHybRules::bell_garland_ell_width(common)));
}

}  // namespace spmvd
