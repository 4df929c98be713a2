#include "core/launch_config.hpp"

#include <sstream>

namespace spmvd {
namespace {

template <typename T>
std::ostream& print_nonzero_fields(std::ostream& os, const T& value) {
  bool first = true;
  for_each_field(value, [&](const char* name, std::uint32_t field) {
    if (field == 0) return;
    os << (first ? "" : " ") << name << '=' << field;
    first = false;
  });
  if (first) os << "-";
  return os;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const LaunchConfig& c) {
  return print_nonzero_fields(os, c);
}

std::string to_string(const LaunchConfig& c) {
  std::ostringstream os;
  os << c;
  return os.str();
}

}  // namespace spmvd
