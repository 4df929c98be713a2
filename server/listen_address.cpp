#include "server/listen_address.hpp"

namespace spmvd {

bool is_loopback_address(std::string_view address) noexcept {
  if (address.starts_with("unix:") || address.starts_with("unix-abstract:")) return true;
  if (address.starts_with("ipv4:") || address.starts_with("ipv6:")) address.remove_prefix(5);
  std::string_view host = address;
  if (host.starts_with('[')) {
    host = host.substr(1, host.find(']') == std::string_view::npos ? 0 : host.find(']') - 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

}  // namespace spmvd
