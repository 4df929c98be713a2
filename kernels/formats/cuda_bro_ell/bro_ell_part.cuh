#pragma once
// cuda_bro_ell's device part for a matrix's rows: the stream rows a choice encodes (in `order`,
// the plan's BAR or RCM order, where given) and their layout, made on the host without the
// device lock (kernels/device_lock.hpp), then uploaded. cuda_bro_ell builds it over the whole
// matrix, cuda_bro_hyb over its leading entries.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/plan_partition.hpp"
#include "kernels/device.hpp"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/bro_parts.cuh"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"

namespace spmvd::bro_detail {

template <typename Value>
std::unique_ptr<BroEllPart<Value>> make_bro_ell_part(const CsrMatrix<double>& matrix,
                                                     const BroEllChoice& choice,
                                                     const LaunchConfig& launch, Device& device,
                                                     const PlanPartition* order) {
  std::vector<std::int32_t> row_order;
  const bro::BroEllLayout<Value> layout = without_device_lock([&] {
    const CsrMatrix<double> rows =
        bro_ell_stream_rows(matrix, choice, row_order,
                            order != nullptr ? std::span<const std::int32_t>(order->entries)
                                             : std::span<const std::int32_t>());
    return bro::make_bro_ell_layout<Value>(rows, choice.params.slice_height,
                                           bro_words_per_symbol(choice.params.variant));
  });
  return std::make_unique<BroEllPart<Value>>(layout, row_order, choice.threads_per_row,
                                             launch.block_size, launch.grid_size, device);
}

}  // namespace spmvd::bro_detail
