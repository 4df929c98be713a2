#include "models/model_plots.hpp"

#include "models/family_model.hpp"

namespace spmvd {

std::vector<NamedSvg> model_set_plots(const ModelSet& set) {
  std::vector<NamedSvg> out;
  for (const FamilyEntry& entry : model_families()) {
    const FamilyRecord* record = set.records.find(entry.name);
    if (record == nullptr) continue;
    for (NamedSvg& picture : record->plots(set.precision)) out.push_back(std::move(picture));
  }
  return out;
}

}  // namespace spmvd
