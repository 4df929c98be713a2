// The one list of model families (docs/MODELS.md). Adding a family: its folder under
// models/families/<name>/ (its record, model, calibration stage) and one line here; a format
// names it in FormatRules::model_family.

#include "models/families/bytes/bytes_family.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/coo/coo_family.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/families/cpu_gpu/cpu_gpu_record.hpp"
#include "models/families/csr_vector/csr_vector_family.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"
#include "models/families/ell/ell_family.hpp"
#include "models/families/ell/ell_record.hpp"
#include "models/families/hyb/hyb_family.hpp"
#include "models/family_model.hpp"

namespace spmvd {
namespace {

static_assert(BytesRecord::kFamily == kBytesFamily);

const FamilyEntry kFamilies[] = {
    {CsrVectorRecord::kFamily, &make_csr_vector_family, &read_record<CsrVectorRecord>},
    {EllRecord::kFamily, &make_ell_family, &read_record<EllRecord>},
    {CooRecord::kFamily, &make_coo_family, &read_record<CooRecord>},
    {"hyb", &make_hyb_family, nullptr},
    {BytesRecord::kFamily, &make_bytes_family, &read_record<BytesRecord>},
    {CpuGpuTimeCoefficients::kFamily, nullptr, &read_record<CpuGpuTimeCoefficients>},
};

}  // namespace

std::span<const FamilyEntry> model_families() noexcept { return kFamilies; }

const FamilyEntry* find_model_family(std::string_view name) noexcept {
  for (const FamilyEntry& entry : kFamilies)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace spmvd
