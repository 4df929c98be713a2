#include "kernels/format_registry.hpp"

#include <string>

#include "core/error.hpp"

namespace spmvd {

void FormatRegistry::add(std::unique_ptr<FormatRules> rules, BuildOperatorFn build,
                         bool builds_on_device) {
  if (!rules || !build)
    throw Error(ErrorCode::internal,
                "format registry: a format was added without rules or builder");
  const std::string name(rules->name());
  if (rules->model_family().empty())
    throw Error(ErrorCode::internal, "format registry: '" + name + "' names no model family");
  const auto id = rules->id().value;
  for (const FormatEntry& entry : entries_) {
    if (entry.rules->id() == rules->id())
      throw Error(ErrorCode::internal, "format registry: format id " + std::to_string(id) +
                                           " of '" + name + "' is already taken by '" +
                                           std::string(entry.rules->name()) + "'");
    if (entry.rules->name() == rules->name())
      throw Error(ErrorCode::internal,
                  "format registry: format name '" + name + "' is already registered (ids " +
                      std::to_string(entry.rules->id().value) + " and " + std::to_string(id) + ")");
  }
  entries_.push_back(FormatEntry{std::move(rules), build, builds_on_device});
}

const FormatEntry* FormatRegistry::find(FormatId id) const noexcept {
  for (const FormatEntry& entry : entries_)
    if (entry.rules->id() == id) return &entry;
  return nullptr;
}

const FormatEntry* FormatRegistry::find(std::string_view name) const noexcept {
  for (const FormatEntry& entry : entries_)
    if (entry.rules->name() == name) return &entry;
  return nullptr;
}

}  // namespace spmvd
