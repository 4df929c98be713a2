#pragma once
// Small pieces the catalogue's FormatRules share.

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/format_rules.hpp"

namespace spmvd {

// The least device_bytes over rules.candidates(features, device); UINT64_MAX when there is no
// candidate. admissible() compares it with the memory budget: the format fits when its
// smallest variant does (the tuner checks each candidate's own bytes before building it).
std::uint64_t smallest_candidate_bytes(const FormatRules& rules, const MatrixFeatures& features,
                                       const DeviceInfo& device, Precision precision);

// smallest_candidate_bytes(...) <= memory_budget_bytes, stopping at the first candidate that
// fits: the tuner asks every format's admissible() once per tuning, and a format whose bytes
// take a pass over the DF (cuda_sell, cuda_bce, cuda_strip) need not size all its candidates.
bool some_candidate_fits(const FormatRules& rules, const MatrixFeatures& features,
                         const DeviceInfo& device, Precision precision,
                         std::uint64_t memory_budget_bytes);

// One candidate per block size of a kernel that runs one thread per row, grid-stride, over one
// wave of resident blocks (CudaCsrVectorRules::grid_size with one lane), each with `params`.
std::vector<Candidate> one_thread_per_row_candidates(FormatId format, const FormatParams& params,
                                                     std::span<const std::uint32_t> block_sizes,
                                                     std::int64_t rows, const DeviceInfo& device);

// ceil(items / items_per_block), clamped to CUDA's grid x-limit [1, 2^31 - 1].
std::uint32_t blocks_for(std::uint64_t items, std::uint64_t items_per_block);

}  // namespace spmvd
