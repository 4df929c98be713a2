// The one list of model families (docs/MODELS.md). Adding a family: its folder under
// models/families/<name>/ and one line here; a format names it in FormatRules::model_family.

#include "models/families/bytes/bytes_family.hpp"
#include "models/families/coo/coo_family.hpp"
#include "models/families/csr_vector/csr_vector_family.hpp"
#include "models/families/ell/ell_family.hpp"
#include "models/families/hyb/hyb_family.hpp"
#include "models/family_model.hpp"

namespace spmvd {
namespace {

constexpr FamilyEntry kFamilies[] = {
    {"csr_vector", &make_csr_vector_family},
    {"ell", &make_ell_family},
    {"coo", &make_coo_family},
    {"hyb", &make_hyb_family},
    {kBytesFamily, &make_bytes_family},
};

}  // namespace

std::span<const FamilyEntry> model_families() noexcept { return kFamilies; }

const FamilyEntry* find_model_family(std::string_view name) noexcept {
  for (const FamilyEntry& entry : kFamilies)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace spmvd
