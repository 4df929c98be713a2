// The one list of compiled formats (ARCHITECTURE.md "Formats"). Adding a format: one line here
// (inside the #if for GPU formats). Ids are explicit in each format's rules header and
// append-only; FormatRegistry::add refuses duplicates, so a clash fails at start-up.

#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_operator.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_operator.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#if SPMVD_WITH_CUDA
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_operator.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_operator.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_operator.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_operator.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_operator.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_operator.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_operator.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_operator.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_operator.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_operator.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#endif

namespace spmvd {
namespace {

FormatRegistry build_registry() {
  FormatRegistry registry;
  registry.add(std::make_unique<CpuCsrRules>(), &build_cpu_csr);
  registry.add(std::make_unique<CpuCooRules>(), &build_cpu_coo);
#if SPMVD_WITH_CUDA
  registry.add(std::make_unique<CudaCsrVectorRules>(), &build_cuda_csr_vector);
  registry.add(std::make_unique<CusparseCsrRules>(), &build_cusparse_csr);
  registry.add(std::make_unique<CudaCsrScalarRules>(), &build_cuda_csr_scalar);
  registry.add(std::make_unique<CudaEllRules>(), &build_cuda_ell);
  registry.add(std::make_unique<CudaCooRules>(), &build_cuda_coo);
  registry.add(std::make_unique<CudaHybRules>(), &build_cuda_hyb);
  registry.add(std::make_unique<CudaSellRules>(), &build_cuda_sell);
  registry.add(std::make_unique<CusparseCooRules>(), &build_cusparse_coo);
  registry.add(std::make_unique<CusparseSellRules>(), &build_cusparse_sell);
  registry.add(std::make_unique<CusparseBsrRules>(), &build_cusparse_bsr);
#endif
  return registry;
}

}  // namespace

const FormatRegistry& format_registry() {
  static const FormatRegistry registry = build_registry();
  return registry;
}

}  // namespace spmvd
