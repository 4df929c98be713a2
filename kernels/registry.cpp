// The one list of compiled formats (ARCHITECTURE.md "Formats"). Adding a format: one line here
// (inside the #if for GPU formats). Ids are explicit in each format's rules header and
// append-only; FormatRegistry::add refuses duplicates, so a clash fails at start-up.

#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_operator.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#if SPMVD_WITH_CUDA
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_operator.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_operator.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#endif

namespace spmvd {
namespace {

FormatRegistry build_registry() {
  FormatRegistry registry;
  registry.add(std::make_unique<CpuCsrRules>(), &build_cpu_csr);
#if SPMVD_WITH_CUDA
  registry.add(std::make_unique<CudaCsrVectorRules>(), &build_cuda_csr_vector);
  registry.add(std::make_unique<CusparseCsrRules>(), &build_cusparse_csr);
#endif
  return registry;
}

}  // namespace

const FormatRegistry& format_registry() {
  static const FormatRegistry registry = build_registry();
  return registry;
}

}  // namespace spmvd
