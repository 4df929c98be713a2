#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_rules.hpp"

#include <algorithm>
#include <limits>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "core/part_features.hpp"
#include "kernels/formats/common/row_length_distribution.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "partition/cpu_gpu_threshold.hpp"

namespace spmvd {
namespace {

// Rows longer than K: the rows the host part touches. Exact from the DF; every row (a bound)
// for features without one.
std::int64_t host_rows(const MatrixFeatures& features, std::int64_t ell_width) {
  if (!distribution_covers_nnz(features)) return features.rows;
  return rows_with_length_at_least(features, ell_width + 1);
}

std::uint64_t gpu_part_bytes(const MatrixFeatures& features, Precision precision,
                             std::int64_t ell_width) {
  const auto slots = static_cast<std::uint64_t>(features.rows) *
                     static_cast<std::uint64_t>(std::max<std::int64_t>(ell_width, 0));
  const auto touched = static_cast<std::uint64_t>(host_rows(features, ell_width));
  return slots * (sizeof(ColIndex) + value_bytes(precision)) +
         touched * (sizeof(std::int32_t) + value_bytes(precision));
}

bool structurally_splittable(const MatrixFeatures& features) {
  return features.row_length_max >= 2 && features.rows <= kMaxDimension;
}

void add_unique(std::vector<Candidate>& out, const Candidate& candidate) {
  if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
}

// K = 1, the smallest GPU part: where the budget holds no other candidate (a matrix larger than
// the device's memory, paper 000/003's motivation), the split is still offered, as admissible()
// promises. The tuner drops the candidates whose own bytes exceed the budget.
constexpr std::uint32_t kSmallestPartBlockSize = 256;

}  // namespace

Candidate CpuGpuSplitRules::candidate_for(std::int64_t ell_width, std::uint32_t block_size,
                                          std::int64_t rows, const DeviceInfo& device) {
  const std::array<std::uint32_t, 1> block{block_size};
  return one_thread_per_row_candidates(
             kCpuGpuSplitFormatId,
             FieldSet::of(CpuGpuSplitParams{.ell_width = static_cast<std::uint32_t>(ell_width)}),
             block, rows, device)
      .front();
}

bool CpuGpuSplitRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                  Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu || !structurally_splittable(features)) return false;
  // K = 1 is the smallest GPU part; the tuner checks each candidate's own bytes before building.
  return gpu_part_bytes(features, precision, 1) <= memory_budget_bytes;
}

std::vector<Candidate> CpuGpuSplitRules::candidates(const MatrixFeatures& features,
                                                    const DeviceInfo& device) const {
  std::vector<Candidate> out;
  if (!structurally_splittable(features)) return out;
  std::vector<std::int64_t> widths;
  for (const std::int64_t width : CudaHybRules::ell_widths(features))
    widths.push_back(std::clamp<std::int64_t>(width, 1, features.row_length_max - 1));
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  for (const std::int64_t width : widths)
    for (const std::uint32_t block : kCpuGpuSplitBlockSizes)
      out.push_back(candidate_for(width, block, features.rows, device));
  add_unique(out, candidate_for(1, kSmallestPartBlockSize, features.rows, device));
  return out;
}

std::uint64_t CpuGpuSplitRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                             const Candidate& candidate) const {
  return gpu_part_bytes(features, precision, params_of(candidate).ell_width);
}

bool CpuGpuSplitRules::is_valid(const Candidate& candidate, const MatrixFeatures& features,
                                const DeviceInfo& device) const {
  if (candidate.format != id() || !structurally_splittable(features)) return false;
  CpuGpuSplitParams params;
  try {
    params = params_of(candidate);
  } catch (const Error&) {
    return false;
  }
  if (params.ell_width < 1 ||
      static_cast<std::int64_t>(params.ell_width) >= features.row_length_max)
    return false;
  if (std::find(kCpuGpuSplitBlockSizes.begin(), kCpuGpuSplitBlockSizes.end(),
                candidate.launch.block_size) == kCpuGpuSplitBlockSizes.end())
    return false;
  return candidate ==
         candidate_for(params.ell_width, candidate.launch.block_size, features.rows, device);
}

std::vector<FormatPart> CpuGpuSplitRules::parts(const MatrixFeatures& features,
                                                const Candidate& candidate) const {
  const std::int64_t width = params_of(candidate).ell_width;
  const TruncatedDistribution cut = truncate_distribution(features.distribution, width);
  std::int64_t kept_rows = 0;
  for (const RowLengthCount& c : cut.kept) kept_rows += c.rows;
  // The ELL kernel visits every row; the ones with no entry are the part's empty rows.
  FormatPart gpu{
      .runs = FormatPart::Runs::gpu,
      .features = part_features(features, cut.kept, std::max<std::int64_t>(0, features.rows - kept_rows)),
      .candidate = Candidate{.format = kCudaEllFormatId,
                             .params = FieldSet::of(CudaEllParams{
                                 .ell_width = static_cast<std::uint32_t>(width)}),
                             .launch = candidate.launch}};
  FormatPart host{.runs = FormatPart::Runs::host,
                  .features = part_features(features, cut.remainder),
                  .candidate = Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}}};
  // x to the host (every column: the host part's columns are not known from the DF) and one
  // value per touched row back (its row indices stay on the device, uploaded at build).
  host.transfer_values = static_cast<std::uint64_t>(features.cols) +
                         static_cast<std::uint64_t>(host.features.rows);
  host.host_tasks = host_chunk_count(host.features.nnz);
  return {std::move(gpu), std::move(host)};
}

std::vector<Candidate> CpuGpuSplitRules::candidates_chosen_by(const PartTimePredictor& predictor,
                                                              const MatrixFeatures& features,
                                                              const DeviceInfo& device) const {
  std::vector<Candidate> out;
  if (!structurally_splittable(features) || features.rows <= 0) return out;
  for (const std::uint32_t block : kCpuGpuSplitBlockSizes) {
    bool unpredictable = false;
    // The split's ELL part holds rows * K slots, so K = ell_entries / rows.
    const auto part_ms = [&](const EllCooSplit& split, std::size_t part) {
      const std::int64_t width = split.ell_entries / features.rows;
      const std::optional<double> ms =
          predictor.part_ms(parts(features, candidate_for(width, block, features.rows, device))[part]);
      if (!ms) unpredictable = true;
      return ms.value_or(std::numeric_limits<double>::infinity());
    };
    // The parts' own times include their copies (the host part's transfer_values), so the
    // threshold search's copy terms are switched off (infinite bandwidth).
    const CpuGpuSplitCosts costs{
        .gpu_part_ms = [&](const EllCooSplit& s) { return part_ms(s, 0); },
        .cpu_part_ms = [&](const EllCooSplit& s) { return part_ms(s, 1); },
        .host_device_bytes_per_ms = std::numeric_limits<double>::infinity(),
        .copy_latency_ms = 0.0,
        .value_bytes = 8,
    };
    const CpuGpuSplitTime balanced = balanced_cpu_gpu_threshold(features, costs);
    if (unpredictable) continue;
    // K = longest row leaves the host nothing: there the host side was still the slower one
    // at every K below, so the least maximum with a host part is at longest row - 1.
    const std::int64_t width =
        std::clamp<std::int64_t>(balanced.ell_width, 1, features.row_length_max - 1);
    add_unique(out, candidate_for(width, block, features.rows, device));
  }
  if (!out.empty()) add_unique(out, candidate_for(1, kSmallestPartBlockSize, features.rows, device));
  return out;
}

}  // namespace spmvd
