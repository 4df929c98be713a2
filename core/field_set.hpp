#pragma once
// Named values of a struct that core does not know: a format's parameters (FormatParams) and
// the features only one format needs (MatrixFeatures::format_features). The owning folder
// declares its struct's fields once, in a for_each_field found by argument-dependent lookup,
// and FieldSet::of / as derive the rest: equality, printing (operator<<) and JSON
// (core/field_set_json.hpp) work on the FieldSet, so a Plan can hold any format's parameters
// and the plan cache can store them without a central struct of every format's fields.
//
// Field types: integers (stored as int64; decoded back with a range check), double, and
// vectors of either, for variable-length parameters (partition boundaries, bit widths, row
// maps). A set is immutable once built; its fields are kept sorted by name, so two sets of the
// same values compare equal however they were built.

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.hpp"

namespace spmvd {

// A struct's one field list: `static constexpr auto kFields = std::tuple{declare_field("name",
// &Struct::name), ...};` gives it for_each_field, and with it FieldSet::of and as.
template <typename Struct, typename Member>
struct DeclaredField {
  const char* name;
  Member Struct::*member;
};
template <typename Struct, typename Member>
constexpr DeclaredField<Struct, Member> declare_field(const char* name, Member Struct::*member) {
  return {name, member};
}
template <typename Struct, typename Visit>
requires requires { std::remove_const_t<Struct>::kFields; }
void for_each_field(Struct& value, Visit&& visit) {
  std::apply([&](const auto&... field) { (visit(field.name, value.*(field.member)), ...); },
             std::remove_const_t<Struct>::kFields);
}

using FieldValue =
    std::variant<std::int64_t, double, std::vector<std::int64_t>, std::vector<double>>;

struct NamedField {
  std::string name;
  FieldValue value;
  friend bool operator==(const NamedField&, const NamedField&) = default;
};

class FieldSet {
 public:
  FieldSet() = default;
  // Throws Error(invalid_argument) on an empty or repeated name.
  explicit FieldSet(std::vector<NamedField> fields);

  // The fields of `value`.
  template <typename Struct>
  static FieldSet of(const Struct& value);

  // `Struct` filled from the set. Throws Error(invalid_argument) "<owner>: field 'name' ..."
  // when a field is missing, of another kind, outside the member's range, or when the set holds
  // a field the struct does not declare (a stored plan of another shape).
  template <typename Struct>
  Struct as(std::string_view owner) const;

  const std::vector<NamedField>& fields() const noexcept { return fields_; }
  bool empty() const noexcept { return fields_.empty(); }
  // nullptr when absent.
  const NamedField* find(std::string_view name) const noexcept;
  // The list field `name` read in place (no copy, as `as` makes); nullptr when absent or of
  // another kind. Valid while the set is.
  template <typename T>
  const std::vector<T>* list(std::string_view name) const noexcept {
    const NamedField* field = find(name);
    return field != nullptr ? std::get_if<std::vector<T>>(&field->value) : nullptr;
  }

  // The scalar field `name` (std::int64_t or double) read in place; nullptr when absent or of
  // another kind.
  template <typename T>
  const T* scalar(std::string_view name) const noexcept {
    const NamedField* field = find(name);
    return field != nullptr ? std::get_if<T>(&field->value) : nullptr;
  }

  friend bool operator==(const FieldSet&, const FieldSet&) = default;

 private:
  std::vector<NamedField> fields_;
};

// How many fields of b a holds at the same value: how near two parameter sets are.
std::size_t shared_field_count(const FieldSet& a, const FieldSet& b) noexcept;

// "slice_height=32 sort_window=256"; vectors as [1,2,3] (the first 8 entries and the count
// beyond); "-" for an empty set.
std::ostream& operator<<(std::ostream& os, const FieldSet& set);
std::string to_string(const FieldSet& set);

// ---- implementation of the templates ----

namespace field_set_detail {

template <typename T>
inline constexpr bool is_vector_v = false;
template <typename T>
inline constexpr bool is_vector_v<std::vector<T>> = true;

template <typename Member>
FieldValue encode(const Member& member) {
  if constexpr (std::is_integral_v<Member>) {
    static_assert(sizeof(Member) < 8 || std::is_signed_v<Member>,
                  "FieldSet holds integers as int64: use int64 or a narrower type");
    return static_cast<std::int64_t>(member);
  } else if constexpr (std::is_floating_point_v<Member>) {
    return static_cast<double>(member);
  } else {
    static_assert(is_vector_v<Member>, "FieldSet fields: integers, doubles and vectors of them");
    using Element = typename Member::value_type;
    if constexpr (std::is_integral_v<Element>) {
      static_assert(sizeof(Element) < 8 || std::is_signed_v<Element>,
                    "FieldSet holds integers as int64: use int64 or a narrower type");
      return std::vector<std::int64_t>(member.begin(), member.end());
    } else {
      static_assert(std::is_floating_point_v<Element>, "FieldSet vectors: integers or doubles");
      return std::vector<double>(member.begin(), member.end());
    }
  }
}

[[noreturn]] void fail_field(std::string_view owner, std::string_view name,
                             const std::string& what);

template <typename Integer>
Integer narrow(std::int64_t value, std::string_view owner, std::string_view name) {
  if (value < static_cast<std::int64_t>(std::numeric_limits<Integer>::min()) ||
      (sizeof(Integer) < 8 &&
       value > static_cast<std::int64_t>(std::numeric_limits<Integer>::max()))) {
    fail_field(owner, name, "value " + std::to_string(value) + " is out of its range");
  }
  return static_cast<Integer>(value);
}

template <typename Member>
void decode(const FieldValue& value, Member& member, std::string_view owner,
            std::string_view name) {
  if constexpr (std::is_integral_v<Member>) {
    const auto* held = std::get_if<std::int64_t>(&value);
    if (held == nullptr) fail_field(owner, name, "is not an integer");
    member = narrow<Member>(*held, owner, name);
  } else if constexpr (std::is_floating_point_v<Member>) {
    if (const auto* held = std::get_if<double>(&value)) {
      member = static_cast<Member>(*held);
    } else if (const auto* integer = std::get_if<std::int64_t>(&value)) {
      member = static_cast<Member>(*integer);
    } else {
      fail_field(owner, name, "is not a number");
    }
  } else {
    using Element = typename Member::value_type;
    member.clear();
    if constexpr (std::is_integral_v<Element>) {
      const auto* held = std::get_if<std::vector<std::int64_t>>(&value);
      if (held == nullptr) fail_field(owner, name, "is not a list of integers");
      member.reserve(held->size());
      for (const std::int64_t v : *held) member.push_back(narrow<Element>(v, owner, name));
    } else {
      if (const auto* held = std::get_if<std::vector<double>>(&value)) {
        member.assign(held->begin(), held->end());
      } else if (const auto* integers = std::get_if<std::vector<std::int64_t>>(&value)) {
        member.assign(integers->begin(), integers->end());  // [] and [1, 2] read as integers
      } else {
        fail_field(owner, name, "is not a list of numbers");
      }
    }
  }
}

}  // namespace field_set_detail

template <typename Struct>
FieldSet FieldSet::of(const Struct& value) {
  std::vector<NamedField> fields;
  for_each_field(value, [&fields](const char* name, const auto& member) {
    fields.push_back(NamedField{name, field_set_detail::encode(member)});
  });
  return FieldSet(std::move(fields));
}

template <typename Struct>
Struct FieldSet::as(std::string_view owner) const {
  Struct out{};
  std::size_t matched = 0;
  for_each_field(out, [&](const char* name, auto& member) {
    const NamedField* field = find(name);
    if (field == nullptr) field_set_detail::fail_field(owner, name, "is missing");
    field_set_detail::decode(field->value, member, owner, name);
    ++matched;
  });
  if (matched != fields_.size()) {
    for (const NamedField& field : fields_) {
      bool declared = false;
      for_each_field(out, [&](const char* name, const auto&) { declared |= field.name == name; });
      if (!declared) field_set_detail::fail_field(owner, field.name, "is not one of its fields");
    }
  }
  return out;
}

}  // namespace spmvd
