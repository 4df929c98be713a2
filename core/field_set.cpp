#include "core/field_set.hpp"

#include <algorithm>
#include <sstream>

namespace spmvd {
namespace field_set_detail {

void fail_field(std::string_view owner, std::string_view name, const std::string& what) {
  throw_invalid(std::string(owner) + ": field '" + std::string(name) + "' " + what);
}

}  // namespace field_set_detail

FieldSet::FieldSet(std::vector<NamedField> fields) : fields_(std::move(fields)) {
  // Sorted by name, so that a set decoded from JSON (whose objects have no order) equals the
  // one built from the struct.
  // An empty list is one value whatever its element type: JSON's [] reads back as integers.
  for (NamedField& field : fields_)
    if (const auto* list = std::get_if<std::vector<double>>(&field.value); list && list->empty())
      field.value = std::vector<std::int64_t>{};
  std::sort(fields_.begin(), fields_.end(),
            [](const NamedField& a, const NamedField& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name.empty()) throw_invalid("field set: a field has no name");
    if (i > 0 && fields_[i - 1].name == fields_[i].name)
      throw_invalid("field set: field '" + fields_[i].name + "' appears twice");
  }
}

const NamedField* FieldSet::find(std::string_view name) const noexcept {
  for (const NamedField& field : fields_)
    if (field.name == name) return &field;
  return nullptr;
}

std::size_t shared_field_count(const FieldSet& a, const FieldSet& b) noexcept {
  std::size_t n = 0;
  for (const NamedField& field : b.fields()) {
    const NamedField* same = a.find(field.name);
    if (same != nullptr && same->value == field.value) ++n;
  }
  return n;
}

namespace {

constexpr std::size_t kPrintedEntries = 8;

template <typename Element>
void print_list(std::ostream& os, const std::vector<Element>& list) {
  os << '[';
  for (std::size_t i = 0; i < list.size() && i < kPrintedEntries; ++i)
    os << (i ? "," : "") << list[i];
  if (list.size() > kPrintedEntries) os << ",... " << list.size() << " in all";
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const FieldSet& set) {
  if (set.empty()) return os << '-';
  bool first = true;
  for (const NamedField& field : set.fields()) {
    os << (first ? "" : " ") << field.name << '=';
    first = false;
    std::visit(
        [&os](const auto& value) {
          if constexpr (field_set_detail::is_vector_v<std::remove_cvref_t<decltype(value)>>)
            print_list(os, value);
          else
            os << value;
        },
        field.value);
  }
  return os;
}

std::string to_string(const FieldSet& set) {
  std::ostringstream os;
  os << set;
  return os.str();
}

}  // namespace spmvd
