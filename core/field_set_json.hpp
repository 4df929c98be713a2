#pragma once
// A FieldSet as a JSON object and back (plans in the plan cache, calibration records): each
// field a member, integers as JSON integers, doubles as numbers, vectors as arrays.

#include <nlohmann/json.hpp>
#include <string>

#include "core/field_set.hpp"

namespace spmvd {

// Throws Error(invalid_argument) "<context>: field '<name>' is ..." for a non-finite double
// (JSON has no NaN or infinity).
nlohmann::json field_set_to_json(const FieldSet& set, const std::string& context);

// Throws Error(invalid_argument) "<context>: field '<path>' ..." when `object` is not an object
// or a member is not an integer, a number or an array of numbers, or an integer exceeds the
// int64 range.
FieldSet field_set_from_json(const nlohmann::json& object, const std::string& context,
                             const std::string& path);

}  // namespace spmvd
