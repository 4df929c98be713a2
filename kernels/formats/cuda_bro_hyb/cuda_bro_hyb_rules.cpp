#include "kernels/formats/cuda_bro_hyb/cuda_bro_hyb_rules.hpp"

#include <string>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "core/part_features.hpp"
#include "kernels/format_parts.hpp"
#include "kernels/formats/common/bro_stream.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"

namespace spmvd {

BroHybFeatures compute_bro_hyb_features(const CsrMatrix<double>& m, std::int64_t ell_width,
                                        const std::optional<BroEllFeatures>& ell) {
  const BroEllFeatures leading = ell && ell->hyb_ell_width == ell_width
                                     ? ell->leading()
                                     : compute_bro_ell_features(m, ell_width, false).leading();
  const std::vector<RowOffset> rest = bro::trailing_offsets(m, ell_width);
  BroHybFeatures f{.ell_width = ell_width,
                   .coo_entries = rest.back(),
                   .ell_slices = leading.slices,
                   .ell_stream_words = leading.stream_words,
                   .ell_columns = leading.columns,
                   .ell_value_slots = leading.value_slots,
                   .coo_intervals = {},
                   .coo_stream_words = {}};
  for (const std::uint32_t rounds : kBroCooIntervalRounds) {
    const bro::BroCooSize size = bro::bro_coo_size(rest, rounds);
    f.coo_intervals.push_back(size.intervals);
    f.coo_stream_words.push_back(size.stream_words);
  }
  return f;
}

void check_bro_hyb_reorder(const CudaBroHybParams& params) {
  if (params.reorder == kBroReorderRcm)
    throw_invalid(
        "cuda_bro_hyb: reorder 2 (RCM) is not a BRO-HYB layout (its COO part keeps the caller's "
        "numbering; RCM is cuda_bro_ell's)");
}

std::string bro_hyb_bar_partition_kind(std::uint32_t slice_height, std::int64_t ell_width,
                                       std::int64_t longest_row) {
  if (ell_width >= longest_row) return bro_bar_partition_kind(slice_height);
  return bro_bar_partition_kind(slice_height) + "/k" + std::to_string(ell_width);
}

std::shared_ptr<const PlanPartition> bro_hyb_bar_partition(const BuildSource& source,
                                                           const CsrMatrix<double>& leading,
                                                           const CudaBroHybParams& params,
                                                           const BroEllChoice& choice,
                                                           std::int64_t longest_row) {
  if (choice.params.reorder != kBroReorderBar) return nullptr;
  // The height bro_ell_stream_rows gives bar_order.
  const std::uint32_t height = choice.params.slice_height / choice.threads_per_row;
  return bro_bar_partition(
      source, leading, bro_hyb_bar_partition_kind(height, params.ell_width, longest_row), height);
}

std::optional<BroHybFeatures> cuda_bro_hyb_features(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_bro_hyb");
  if (it == features.format_features.end()) return std::nullopt;
  BroHybFeatures f = it->second.as<BroHybFeatures>("features of cuda_bro_hyb");
  for (const auto* v : {&f.ell_slices, &f.ell_stream_words, &f.ell_columns, &f.ell_value_slots})
    if (v->size() != kBroEllChoices.size())
      throw_invalid("features of cuda_bro_hyb: ELL sizes for " + std::to_string(v->size()) +
                    " layouts, expected " + std::to_string(kBroEllChoices.size()));
  for (const auto* v : {&f.coo_intervals, &f.coo_stream_words})
    if (v->size() != kBroCooIntervalRounds.size())
      throw_invalid("features of cuda_bro_hyb: COO sizes for " + std::to_string(v->size()) +
                    " interval sizes, expected " + std::to_string(kBroCooIntervalRounds.size()));
  return f;
}

bool CudaBroHybRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                 Precision precision, std::uint64_t memory_budget_bytes) const {
  // Without its sizes it offers no candidate and is no choice (as DIA without its diagonals).
  if (!device.is_gpu || !cuda_bro_hyb_features(features)) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaBroHybRules::candidates(const MatrixFeatures& features,
                                                   const DeviceInfo& device) const {
  const std::optional<BroHybFeatures> own = cuda_bro_hyb_features(features);
  if (!own) return {};
  std::vector<Candidate> out;
  for (const BroEllChoice& choice : kBroEllChoices) {
    if (choice.params.reorder == kBroReorderRcm) continue;  // check_bro_hyb_reorder
    for (const std::uint32_t rounds : kBroCooIntervalRounds)
      out.push_back(Candidate{
          .format = id(),
          .params =
              FieldSet::of(CudaBroHybParams{.ell_width = static_cast<std::uint32_t>(own->ell_width),
                                            .slice_height = choice.params.slice_height,
                                            .variant = choice.params.variant,
                                            .reorder = choice.params.reorder,
                                            .interval_rounds = rounds}),
          .launch = {.block_size = kBroBlockSize,
                     .threads_per_row = choice.threads_per_row,
                     .grid_size = CudaCsrVectorRules::grid_size(
                         features.rows, choice.threads_per_row, kBroBlockSize, device)}});
  }
  return out;
}

std::uint64_t CudaBroHybRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                            const Candidate& candidate) const {
  const CudaBroHybParams params = params_of(candidate);
  const std::size_t ell_index =
      bro_ell_choice_index("cuda_bro_hyb", params.ell(), candidate.launch.threads_per_row);
  const std::size_t coo_index = bro_coo_rounds_index("cuda_bro_hyb", params.interval_rounds);
  check_bro_hyb_reorder(params);
  const std::optional<BroHybFeatures> own = cuda_bro_hyb_features(features);
  if (!own) throw_invalid("cuda_bro_hyb: device bytes need its features (none computed)");
  if (own->ell_width != params.ell_width)
    throw_invalid("cuda_bro_hyb: ell_width " + std::to_string(params.ell_width) +
                  " is not the width its features were sized at (" +
                  std::to_string(own->ell_width) + ")");
  return bro_ell_layout_bytes(own->ell(), ell_index, features.rows, precision) +
         bro_coo_layout_bytes(own->coo(), coo_index, own->coo_entries, precision);
}

std::optional<FieldSet> CudaBroHybRules::own_features(const CsrMatrix<double>& matrix,
                                                      const MatrixFeatures& common) const {
  return FieldSet::of(compute_bro_hyb_features(matrix, CudaHybRules::bell_garland_ell_width(common),
                                               cuda_bro_ell_features(common)));
}

std::vector<FormatPart> CudaBroHybRules::parts(const MatrixFeatures& features,
                                               const Candidate& candidate) const {
  const std::optional<BroHybFeatures> own = cuda_bro_hyb_features(features);
  if (!own) return {};
  const CudaBroHybParams params = params_of(candidate);
  const TruncatedDistribution cut = truncate_distribution(features.distribution, own->ell_width);
  std::int64_t ell_rows = 0;
  for (const RowLengthCount& set : cut.kept) ell_rows += set.rows;
  // The ELL part writes y on every row (beta * y where a row keeps no entry).
  FormatPart ell{.runs = FormatPart::Runs::gpu,
                 .features = part_features(features, cut.kept, features.rows - ell_rows),
                 .candidate = Candidate{.format = kCudaBroEllFormatId,
                                        .params = FieldSet::of(params.ell()),
                                        .launch = candidate.launch}};
  // cuda_bro_ell's features of the cut rows: the ELL part's sizes, which are also their own
  // leading ones at ell_width (no row of the part is longer).
  BroEllFeatures cut_rows = own->ell();
  cut_rows.hyb_ell_width = own->ell_width;
  cut_rows.hyb_stream_words = cut_rows.stream_words;
  cut_rows.hyb_columns = cut_rows.columns;
  cut_rows.hyb_value_slots = cut_rows.value_slots;
  ell.features.format_features.insert_or_assign("cuda_bro_ell", FieldSet::of(cut_rows));
  std::vector<FormatPart> out{std::move(ell)};
  if (own->coo_entries == 0) return out;
  const std::size_t rounds = bro_coo_rounds_index("cuda_bro_hyb", params.interval_rounds);
  // The COO part adds into the rows it holds alone.
  FormatPart coo{
      .runs = FormatPart::Runs::gpu,
      .features = part_features(features, cut.remainder),
      .candidate = Candidate{
          .format = kCudaBroCooFormatId,
          .params = FieldSet::of(CudaBroCooParams{.interval_rounds = params.interval_rounds}),
          .launch = {.block_size = kBroCooBlockSize,
                     .threads_per_row = 0,
                     .grid_size = blocks_for(static_cast<std::uint64_t>(own->coo_intervals[rounds]),
                                             kBroCooBlockSize / 32)}},
      .skipped_launches = 1};  // cuda_bro_coo's y scaling: the ELL part wrote every row
  coo.features.format_features.insert_or_assign("cuda_bro_coo", FieldSet::of(own->coo()));
  out.push_back(std::move(coo));
  return out;
}

}  // namespace spmvd
