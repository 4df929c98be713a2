#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/cusparse_spmv.cuh"
#include "kernels/formats/common/device_sell.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"

namespace spmvd {

static_assert(kCusparseSpmvSellAlg1 == CUSPARSE_SPMV_SELL_ALG1, "cusparse_sell_rules.hpp is stale");
static_assert(kPaddingColumn == -1, "cuSPARSE marks sliced ELL padding with column -1");

namespace {

template <typename Value>
class CusparseSellOperator final : public catalogue_detail::CusparseOperator<Value> {
 public:
  // `sell` has sort window 1: cuSPARSE's SELL has no permutation.
  CusparseSellOperator(const CsrMatrix<double>& m, std::shared_ptr<const DeviceSellLayout> sell,
                       Device& device)
      : catalogue_detail::CusparseOperator<Value>(m, device), sell_(std::move(sell)) {
    if (sell_->slots() > kMaxDimension)
      throw_invalid("cusparse_sell: " + std::to_string(sell_->slots()) + " padded slots of slice " +
                    std::to_string(sell_->slice_height) + " exceed the 32-bit slice offsets");
    // cuSPARSE reads 32-bit slice offsets: its own copy of the shared layout's (one per slice);
    // the columns and values are the shared arrays.
    const std::vector<std::int32_t> offsets(sell_->host_slice_offsets.begin(),
                                            sell_->host_slice_offsets.end());
    void* slice_offsets = this->keep(upload(device, offsets.data(), offsets.size()));
    if (!this->has_work(m)) return;
    cusparseSpMatDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateSlicedEll(
        &descr, m.rows, m.cols, m.nnz(), sell_->slots(), sell_->slice_height, slice_offsets,
        sell_->col_indices.data(), sell_->values.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_BASE_ZERO, catalogue_detail::cuda_value_type<Value>()));
    this->start(device, descr, CUSPARSE_SPMV_SELL_ALG1);
  }

  // Its own arrays and workspace, and the shared columns and values it multiplies with.
  std::size_t device_bytes() const noexcept override {
    return catalogue_detail::CusparseOperator<Value>::device_bytes() + sell_->col_indices.bytes() +
           sell_->values.bytes();
  }

 private:
  std::shared_ptr<const DeviceSellLayout> sell_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CusparseSellRules::build(const BuildSource& source,
                                                       Precision precision,
                                                       const Candidate& candidate) {
  check_candidate_format("cusparse_sell", kCusparseSellFormatId, candidate);
  const CusparseSellParams params = params_of(candidate);
  check_one_of("cusparse_sell", "slice_height", params.slice_height, kCusparseSellSliceHeights);
  constexpr std::array<std::uint32_t, 1> algorithms{kCusparseSpmvSellAlg1};
  check_one_of("cusparse_sell", "library_algorithm", params.library_algorithm, algorithms);
  Device& device = source.device();
  check_gpu_device("cusparse_sell", device);
  // The same arrays as cuda_sell's unsorted candidates of this slice height (shared key).
  auto sell = shared_device_sell_layout(source, precision, params.slice_height, 1);
  if (precision == Precision::fp32)
    return std::make_unique<CusparseSellOperator<float>>(source.host(), std::move(sell), device);
  return std::make_unique<CusparseSellOperator<double>>(source.host(), std::move(sell), device);
}

}  // namespace spmvd
