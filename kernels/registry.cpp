// The one list of compiled formats (ARCHITECTURE.md "Formats"). Adding a format: its folder
// and one line here (inside the #if for GPU formats). Ids are explicit in each format's rules
// header and append-only; FormatRegistry::add refuses duplicates, so a clash fails at start-up.

#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#if SPMVD_WITH_CUDA
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"
#endif

namespace spmvd {
namespace {

FormatRegistry build_registry() {
  FormatRegistry registry;
  registry.add<CpuCsrRules>();
  registry.add<CpuCooRules>();
#if SPMVD_WITH_CUDA
  registry.add<CudaCsrVectorRules>();
  registry.add<CusparseCsrRules>();
  registry.add<CudaCsrScalarRules>();
  registry.add<CudaEllRules>();
  registry.add<CudaCooRules>();
  registry.add<CudaHybRules>();
  registry.add<CudaSellRules>();
  registry.add<CusparseCooRules>();
  registry.add<CusparseSellRules>();
  registry.add<CusparseBsrRules>();
#endif
  return registry;
}

}  // namespace

const FormatRegistry& format_registry() {
  static const FormatRegistry registry = build_registry();
  return registry;
}

}  // namespace spmvd
