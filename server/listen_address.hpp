#pragma once
// What a gRPC listen address exposes.

#include <string_view>

namespace spmvd {

// True when only this machine can connect: 127.0.0.0/8, localhost, [::1], or a unix socket
// (unix:/path, unix-abstract:). Wildcards (0.0.0.0, [::]) and any other host are not.
bool is_loopback_address(std::string_view listen_address) noexcept;

}  // namespace spmvd
