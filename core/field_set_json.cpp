#include "core/field_set_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.hpp"

namespace spmvd {
namespace {

using nlohmann::json;

double finite(double value, const std::string& context, const std::string& name) {
  if (!std::isfinite(value))
    throw_invalid(context + ": field '" + name + "' is " + std::to_string(value) +
                  ", expected a finite number");
  return value;
}

// An integer literal within int64; nullopt for a float.
bool read_integer(const json& value, std::int64_t& out) {
  if (value.is_number_unsigned()) {
    const auto raw = value.get<std::uint64_t>();
    if (raw > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(raw);
    return true;
  }
  if (value.is_number_integer()) {
    out = value.get<std::int64_t>();
    return true;
  }
  return false;
}

}  // namespace

json field_set_to_json(const FieldSet& set, const std::string& context) {
  json out = json::object();
  for (const NamedField& field : set.fields()) {
    if (const auto* integer = std::get_if<std::int64_t>(&field.value)) {
      out[field.name] = *integer;
    } else if (const auto* number = std::get_if<double>(&field.value)) {
      out[field.name] = finite(*number, context, field.name);
    } else if (const auto* integers = std::get_if<std::vector<std::int64_t>>(&field.value)) {
      out[field.name] = *integers;
    } else {
      json numbers = json::array();
      for (const double v : std::get<std::vector<double>>(field.value))
        numbers.push_back(finite(v, context, field.name));
      out[field.name] = std::move(numbers);
    }
  }
  return out;
}

FieldSet field_set_from_json(const json& object, const std::string& context,
                             const std::string& path) {
  const auto fail = [&](const std::string& name, const std::string& what) {
    throw_invalid(context + ": field '" + (path.empty() ? name : path + "." + name) + "' " + what);
  };
  if (!object.is_object())
    throw_invalid(context + ": field '" + path + "' has type " + object.type_name() +
                  ", expected object");
  std::vector<NamedField> fields;
  for (const auto& [name, value] : object.items()) {
    std::int64_t integer = 0;
    if (value.is_number()) {
      if (read_integer(value, integer)) {
        fields.push_back({name, integer});
      } else if (value.is_number_float()) {
        fields.push_back({name, value.get<double>()});
      } else {
        fail(name, "exceeds the int64 range");
      }
    } else if (value.is_array()) {
      std::vector<std::int64_t> integers;
      std::vector<double> numbers;
      bool all_integers = true;
      for (std::size_t i = 0; i < value.size(); ++i) {
        const json& entry = value[i];
        if (!entry.is_number())
          fail(name + "[" + std::to_string(i) + "]",
               std::string("has type ") + entry.type_name() + ", expected number");
        if (all_integers && read_integer(entry, integer)) {
          integers.push_back(integer);
        } else if (all_integers && !entry.is_number_float()) {
          fail(name + "[" + std::to_string(i) + "]", "exceeds the int64 range");
        } else {
          if (all_integers) numbers.assign(integers.begin(), integers.end());
          all_integers = false;
          numbers.push_back(entry.get<double>());
        }
      }
      if (all_integers)
        fields.push_back({name, std::move(integers)});
      else
        fields.push_back({name, std::move(numbers)});
    } else {
      fail(name, std::string("has type ") + value.type_name() +
                     ", expected a number or an array of numbers");
    }
  }
  return FieldSet(std::move(fields));
}

}  // namespace spmvd
