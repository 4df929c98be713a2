#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "core/structure_features.hpp"
#include "kernels/formats/common/bar_reorder.hpp"
#include "kernels/formats/common/bro_stream.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_features.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "partition/rcm_order.hpp"
#include "partition/symmetric_permutation.hpp"

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

void check_bro_ell_reorder(std::string_view owner, const CudaBroEllParams& params,
                           std::int64_t rows, std::int64_t cols) {
  if (params.reorder == kBroReorderRcm && rows != cols)
    throw_invalid(std::string(owner) +
                  ": reorder 2 (RCM) renumbers rows and columns alike and needs a square matrix; "
                  "this one is " +
                  std::to_string(rows) + " x " + std::to_string(cols));
}

std::shared_ptr<const PlanPartition> bro_ell_rcm_partition(const BuildSource& source) {
  const CsrMatrix<double>& m = source.host();
  check_bro_ell_reorder("cuda_bro_ell", CudaBroEllParams{.reorder = kBroReorderRcm}, m.rows,
                        m.cols);
  return source.partition(
      std::string(kBroRcmPartitionKind),
      [&](const PlanPartition& held) {
        return permutation_problem(held, kBroRcmPartitionKind, m.rows);
      },
      [&] {
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::int32_t> order = rcm_order(m);
        spdlog::info(
            "cuda_bro_ell: RCM order of {} rows, {} nonzeros in {:.1f} ms", m.rows, m.nnz(),
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
        return order;
      });
}

std::string bro_bar_partition_kind(std::uint32_t slice_height) {
  return "bar/h" + std::to_string(slice_height);
}

std::shared_ptr<const PlanPartition> bro_bar_partition(const BuildSource& source,
                                                       const CsrMatrix<double>& rows,
                                                       std::string_view kind,
                                                       std::uint32_t slice_height) {
  return source.partition(
      std::string(kind),
      [&](const PlanPartition& held) { return permutation_problem(held, kind, rows.rows); },
      [&] {
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::int32_t> order = bro::bar_order(rows, slice_height);
        spdlog::info(
            "cuda_bro: BAR order ({}) of {} rows, {} nonzeros in {:.1f} ms", kind, rows.rows,
            rows.nnz(),
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
        return order;
      });
}

std::shared_ptr<const PlanPartition> bro_ell_order_partition(const BuildSource& source,
                                                             const BroEllChoice& choice) {
  if (choice.params.reorder == kBroReorderRcm) return bro_ell_rcm_partition(source);
  if (choice.params.reorder != kBroReorderBar) return nullptr;
  // The height bro_ell_stream_rows gives bar_order.
  const std::uint32_t height = choice.params.slice_height / choice.threads_per_row;
  return bro_bar_partition(source, source.host(), bro_bar_partition_kind(height), height);
}

CsrMatrix<double> bro_ell_stream_rows(const CsrMatrix<double>& m, const BroEllChoice& choice,
                                      std::vector<std::int32_t>& order,
                                      std::span<const std::int32_t> given) {
  order.clear();
  check_bro_ell_reorder("cuda_bro_ell", choice.params, m.rows, m.cols);
  if (choice.params.reorder == kBroReorderRcm) {
    if (given.empty())
      order = rcm_order(m);
    else
      order.assign(given.begin(), given.end());
    const CsrMatrix<double> permuted = permute_symmetric(m, order);
    return choice.threads_per_row == 1 ? permuted
                                       : bro::split_rows(permuted, choice.threads_per_row);
  }
  if (choice.params.reorder == kBroReorderBar) {
    if (given.empty())
      order = bro::bar_order(m, choice.params.slice_height / choice.threads_per_row);
    else
      order.assign(given.begin(), given.end());
    const CsrMatrix<double> permuted = bro::permute_rows(m, order);
    return choice.threads_per_row == 1 ? permuted
                                       : bro::split_rows(permuted, choice.threads_per_row);
  }
  return choice.threads_per_row == 1 ? m : bro::split_rows(m, choice.threads_per_row);
}

BroEllFeatures compute_bro_ell_features(const CsrMatrix<double>& m, std::int64_t hyb_ell_width,
                                        bool with_rcm) {
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
  f.bandwidth = matrix_bandwidth(m);
  for (const BroEllChoice& choice : kBroEllChoices) {
    if (choice.params.reorder == kBroReorderRcm) {
      // Sized by add_bro_rcm_sizes; the slice count does not depend on the order.
      const bro::BroEllWalkSizes& walk = walks.at(choice.params.slice_height);
      f.slices.push_back((choice.threads_per_row == kSplitParts ? walk.split : walk.whole).slices);
      f.stream_words.push_back(0);
      f.columns.push_back(0);
      f.value_slots.push_back(0);
      f.hyb_stream_words.push_back(0);
      f.hyb_columns.push_back(0);
      f.hyb_value_slots.push_back(0);
      continue;
    }
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
  if (with_rcm && m.rows == m.cols && m.rows > 0) add_bro_rcm_sizes(m, f);
  return f;
}

std::shared_ptr<const PlanPartition> add_bro_rcm_sizes(const CsrMatrix<double>& m,
                                                       BroEllFeatures& f) {
  constexpr std::uint32_t kSplitParts = 4;  // as compute_bro_ell_features
  // The order the builder would compute (deterministic), handed to it; P A P^T walked once a
  // slice height (BRO-HYB offers no RCM layout: no leading entries).
  auto order = std::make_shared<PlanPartition>(
      PlanPartition{.kind = std::string(kBroRcmPartitionKind), .entries = rcm_order(m)});
  const CsrMatrix<double> permuted = permute_symmetric(m, order->entries);
  f.rcm_sized = 1;
  f.rcm_bandwidth = matrix_bandwidth(permuted);
  f.rcm_sectors_per_nonzero = x_sectors_per_nonzero(permuted);
  std::map<std::uint32_t, bro::BroEllWalkSizes> walks;
  for (std::size_t i = 0; i < kBroEllChoices.size(); ++i) {
    const BroEllChoice& choice = kBroEllChoices[i];
    if (choice.params.reorder != kBroReorderRcm) continue;
    auto it = walks.find(choice.params.slice_height);
    if (it == walks.end())
      it = walks
               .emplace(
                   choice.params.slice_height,
                   bro::bro_ell_walk_sizes(permuted, choice.params.slice_height, kSplitParts, 0))
               .first;
    const bro::BroEllSize& size =
        choice.threads_per_row == kSplitParts ? it->second.split : it->second.whole;
    f.slices.at(i) = size.slices;
    f.stream_words.at(i) = size.stream_words;
    f.columns.at(i) = size.columns;
    f.value_slots.at(i) = size.value_slots;
  }
  return order;
}

bool bro_rcm_may_pay(const CsrMatrix<double>& m, const MatrixFeatures& common,
                     const BroEllFeatures& f) {
  if (m.rows != m.cols || m.rows == 0 || m.nnz() == 0) return false;
  if (compute_cuda_ehyb_features(m).neighbourhood_growth > kEhybMaxNeighbourhoodGrowth)
    return false;
  // Over the layouts in the caller's order: all its x sectors, its stream words above one a
  // stream row, its padding value slots.
  constexpr double kSectorBytes = kXSectorColumns * sizeof(float);
  const auto n = static_cast<double>(m.rows);
  const double sectors_bytes =
      static_cast<double>(m.nnz()) * common.x_sectors_per_nonzero * kSectorBytes;
  double most_saved = sectors_bytes;
  for (std::size_t i = 0; i < kBroEllChoices.size(); ++i) {
    const BroEllChoice& choice = kBroEllChoices[i];
    if (choice.params.reorder != kBroReorderNone) continue;
    const double stream_rows = n * choice.threads_per_row;
    most_saved = std::max(
        most_saved,
        sectors_bytes +
            std::max(0.0, static_cast<double>(f.stream_words.at(i)) - stream_rows) *
                sizeof(std::uint32_t) +
            std::max(0.0, static_cast<double>(f.value_slots.at(i) - m.nnz())) * sizeof(double));
  }
  const double gather_costs = n * (sizeof(std::int32_t) + sizeof(double)) +
                              static_cast<double>(bro_rcm_gather_bytes(m.rows));
  return most_saved > gather_costs;
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
  const std::uint32_t reorder = kBroEllChoices.at(index).params.reorder;
  const auto n = static_cast<std::uint64_t>(rows);
  const std::uint64_t order = reorder != kBroReorderNone ? n * sizeof(std::int32_t) : 0;
  const std::uint64_t scratch_x = reorder == kBroReorderRcm ? n * value_bytes(precision) : 0;
  return at(sizes.stream_words) * sizeof(std::uint32_t) + at(sizes.columns) +
         at(sizes.value_slots) * value_bytes(precision) +
         2 * (at(sizes.slices) + 1) * sizeof(std::int64_t) + order + scratch_x;
}

std::uint64_t bro_rcm_gather_bytes(std::int64_t rows) {
  constexpr std::uint64_t kSectorBytes = kXSectorColumns * sizeof(float);
  // The x gather's sector and the y scatter's: each a random 32-byte sector a row.
  return static_cast<std::uint64_t>(rows) * (sizeof(std::int32_t) + 2 * kSectorBytes);
}

bool bro_rcm_moves_fewer_bytes(const MatrixFeatures& features, const BroEllFeatures& own,
                               std::size_t index) {
  const BroEllChoice& rcm = kBroEllChoices.at(index);
  if (rcm.params.reorder != kBroReorderRcm || features.rows != features.cols || !own.rcm_sized)
    return false;
  CudaBroEllParams same = rcm.params;
  same.reorder = kBroReorderNone;
  const std::size_t identity = bro_ell_choice_index("cuda_bro_ell", same, rcm.threads_per_row);
  constexpr double kSectorBytes = kXSectorColumns * sizeof(float);
  const auto gathers = [&](double sectors_per_nonzero) {
    return static_cast<double>(features.nnz) * sectors_per_nonzero * kSectorBytes;
  };
  const double in_caller_order =
      static_cast<double>(bro_ell_layout_bytes(own, identity, features.rows, Precision::fp64)) +
      gathers(features.x_sectors_per_nonzero);
  const double in_rcm_order =
      static_cast<double>(bro_ell_layout_bytes(own, index, features.rows, Precision::fp64) +
                          bro_rcm_gather_bytes(features.rows)) +
      gathers(own.rcm_sectors_per_nonzero);
  return in_rcm_order < in_caller_order;
}

bool bro_ell_critical_path_bounded(const MatrixFeatures& features,
                                   std::uint32_t threads_per_row) {
  if (features.rows <= 0 || features.nnz <= 0 || threads_per_row == 0) return false;
  const std::int64_t t = threads_per_row;
  const std::int64_t widest_stream_row = (features.row_length_max + t - 1) / t;
  return features.rows * widest_stream_row <= kBroEllMaxLongestToMean * features.nnz;
}

bool CudaBroEllRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                 Precision precision, std::uint64_t memory_budget_bytes) const {
  // Without its sizes it offers no candidate and is no choice (as DIA without its diagonals).
  if (!device.is_gpu || candidates(features, device).empty()) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

namespace {

// The candidates of every layout within the critical-path bound (RCM on square matrices only),
// those RCM layouts that do not move fewer bytes dropped where `offer_rcm_by_bytes`.
std::vector<Candidate> bro_ell_candidates(FormatId id, const MatrixFeatures& features,
                                          const DeviceInfo& device, bool offer_rcm_by_bytes) {
  // Without the sizes nothing bounds the stream (as DIA without its diagonals).
  const std::optional<BroEllFeatures> own = cuda_bro_ell_features(features);
  if (!own) return {};
  std::vector<Candidate> out;
  for (std::size_t i = 0; i < kBroEllChoices.size(); ++i) {
    const BroEllChoice& choice = kBroEllChoices[i];
    if (!bro_ell_critical_path_bounded(features, choice.threads_per_row)) continue;
    if (choice.params.reorder == kBroReorderRcm &&
        (features.rows != features.cols || !own->rcm_sized ||
         (offer_rcm_by_bytes && !bro_rcm_moves_fewer_bytes(features, *own, i))))
      continue;
    out.push_back(
        Candidate{.format = id,
                  .params = FieldSet::of(choice.params),
                  .launch = {.block_size = kBroBlockSize,
                             .threads_per_row = choice.threads_per_row,
                             .grid_size = CudaCsrVectorRules::grid_size(
                                 features.rows, choice.threads_per_row, kBroBlockSize, device)}});
  }
  return out;
}

}  // namespace

std::vector<Candidate> CudaBroEllRules::candidates(const MatrixFeatures& features,
                                                   const DeviceInfo& device) const {
  return bro_ell_candidates(id(), features, device, true);
}

bool CudaBroEllRules::is_valid(const Candidate& candidate, const MatrixFeatures& features,
                               const DeviceInfo& device) const {
  const std::vector<Candidate> space = bro_ell_candidates(id(), features, device, false);
  return std::find(space.begin(), space.end(), candidate) != space.end();
}

double CudaBroEllRules::gather_sectors_per_nonzero(const MatrixFeatures& features,
                                                   const Candidate& candidate) const {
  if (params_of(candidate).reorder == kBroReorderRcm)
    if (const std::optional<BroEllFeatures> own = cuda_bro_ell_features(features))
      return own->rcm_sectors_per_nonzero;
  return features.x_sectors_per_nonzero;
}

std::uint64_t CudaBroEllRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                            const Candidate& candidate) const {
  const CudaBroEllParams params = params_of(candidate);
  const std::size_t index =
      bro_ell_choice_index("cuda_bro_ell", params, candidate.launch.threads_per_row);
  check_bro_ell_reorder("cuda_bro_ell", params, features.rows, features.cols);
  const std::optional<BroEllFeatures> own = cuda_bro_ell_features(features);
  if (!own) throw_invalid("cuda_bro_ell: device bytes need its features (none computed)");
  if (params.reorder == kBroReorderRcm && !own->rcm_sized)
    throw_invalid(
        "cuda_bro_ell: reorder 2 (RCM) was not sized for this matrix (its features found that "
        "no order could pay for the gather: bro_rcm_may_pay)");
  const std::uint64_t gather =
      params.reorder == kBroReorderRcm ? bro_rcm_gather_bytes(features.rows) : 0;
  return bro_ell_layout_bytes(*own, index, features.rows, precision) + gather;
}

std::optional<FieldSet> CudaBroEllRules::own_features(const CsrMatrix<double>& matrix,
                                                      const MatrixFeatures& common) const {
  return FieldSet::of(
      compute_bro_ell_features(matrix, CudaHybRules::bell_garland_ell_width(common), false));
}

// RCM is sized by computing it: Boost's ordering plus P A P^T and the layout's sizes, 0.3-0.5 us
// a nonzero on a 2-core host (bench/feature_timing --renumber), some hundred times a standard
// pass's per-nonzero cost, so only a thorough pass sizes it.
std::optional<ThoroughOwnFeatures> CudaBroEllRules::thorough_own_features(
    const CsrMatrix<double>& matrix, const MatrixFeatures& common) const {
  BroEllFeatures f =
      compute_bro_ell_features(matrix, CudaHybRules::bell_garland_ell_width(common), false);
  ThoroughOwnFeatures out;
  if (bro_rcm_may_pay(matrix, common, f)) out.partitions.push_back(add_bro_rcm_sizes(matrix, f));
  out.features = FieldSet::of(f);
  return out;
}

}  // namespace spmvd
