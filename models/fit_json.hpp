#pragma once
// JSON of fits and calibration records (nlohmann ADL hooks), derived from each type's one field
// list.

#include <nlohmann/json.hpp>
#include <optional>

#include "core/field_set.hpp"
#include "core/format_id.hpp"
#include "models/fitting.hpp"
#include "models/occupancy.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// Every record with a field list (a static kFields, core/field_set.hpp): each field a member of
// its name, written and read from the one list; after reading, check_record(record) where the
// type has one (found by argument-dependent lookup). A missing or mistyped member throws a
// nlohmann::json exception; model_set_from_json turns it into Error(invalid_argument).
template <typename Record>
requires requires { Record::kFields; }
void to_json(nlohmann::json& j, const Record& record) {
  j = nlohmann::json::object();
  for_each_field(record, [&j](const char* name, const auto& member) { j[name] = member; });
}
template <typename Record>
requires requires { Record::kFields; }
void from_json(const nlohmann::json& j, Record& record) {
  for_each_field(record, [&j](const char* name, auto& member) { j.at(name).get_to(member); });
  if constexpr (requires { check_record(record); }) check_record(record);
}

// An optional record: null where it is absent.
template <typename T>
void to_json(nlohmann::json& j, const std::optional<T>& v) {
  if (v)
    j = *v;
  else
    j = nullptr;
}
template <typename T>
void from_json(const nlohmann::json& j, std::optional<T>& v) {
  if (j.is_null())
    v.reset();
  else
    v = j.get<T>();
}

// The types without a field list of their own.
void to_json(nlohmann::json& j, const SamplePoint& v);  // [x, y]
void from_json(const nlohmann::json& j, SamplePoint& v);
void to_json(nlohmann::json& j, const FormatId& v);  // its number
void from_json(const nlohmann::json& j, FormatId& v);
void to_json(nlohmann::json& j, const FieldSet& v);  // core/field_set_json.hpp
void from_json(const nlohmann::json& j, FieldSet& v);

// After reading: a grid's axes ascend and log_ms has widths x rows entries, or all three are
// empty (no grid: no term); throws std::invalid_argument otherwise.
void check_record(const LogGridFit& v);

}  // namespace spmvd
