#include <array>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/cusparse_spmv.cuh"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"

namespace spmvd {

static_assert(kCusparseSpmvSellAlg1 == CUSPARSE_SPMV_SELL_ALG1, "cusparse_sell_rules.hpp is stale");
static_assert(kPaddingColumn == -1, "cuSPARSE marks sliced ELL padding with column -1");

namespace {

template <typename Value>
class CusparseSellOperator final : public catalogue_detail::CusparseOperator<Value> {
 public:
  CusparseSellOperator(const CsrMatrix<double>& m, std::int64_t slice_height, Device& device)
      : catalogue_detail::CusparseOperator<Value>(m, device) {
    // cuSPARSE's SELL has no permutation: sort window 1.
    const SellLayout<Value> sell = make_sell_layout<Value>(m, slice_height, 1);
    if (sell.slots() > kMaxDimension)
      throw_invalid("cusparse_sell: " + std::to_string(sell.slots()) + " padded slots of slice " +
                    std::to_string(slice_height) + " exceed the 32-bit slice offsets");
    const std::vector<std::int32_t> offsets(sell.slice_offsets.begin(), sell.slice_offsets.end());
    void* slice_offsets = this->keep(upload(device, offsets.data(), offsets.size()));
    void* cols = this->keep(upload(device, sell.col_indices.data(), sell.col_indices.size()));
    void* values = this->keep(upload(device, sell.values.data(), sell.values.size()));
    if (!this->has_work(m)) return;
    cusparseSpMatDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateSlicedEll(
        &descr, m.rows, m.cols, m.nnz(), sell.slots(), slice_height, slice_offsets, cols, values,
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
        catalogue_detail::cuda_value_type<Value>()));
    this->start(device, descr, CUSPARSE_SPMV_SELL_ALG1);
  }
};

}  // namespace

std::unique_ptr<SpmvOperator> CusparseSellRules::build(const CsrMatrix<double>& matrix,
                                                       Precision precision,
                                                       const Candidate& candidate, Device& device) {
  check_candidate_format("cusparse_sell", kCusparseSellFormatId, candidate);
  const CusparseSellParams params = params_of(candidate);
  check_one_of("cusparse_sell", "slice_height", params.slice_height, kCusparseSellSliceHeights);
  constexpr std::array<std::uint32_t, 1> algorithms{kCusparseSpmvSellAlg1};
  check_one_of("cusparse_sell", "library_algorithm", params.library_algorithm, algorithms);
  check_gpu_device("cusparse_sell", device);
  if (precision == Precision::fp32)
    return std::make_unique<CusparseSellOperator<float>>(matrix, params.slice_height, device);
  return std::make_unique<CusparseSellOperator<double>>(matrix, params.slice_height, device);
}

}  // namespace spmvd
