#pragma once
// In-memory gzip, for Matrix Market bytes that arrive over the wire (files are read by
// matrix_market.cpp through gzopen).

#include <string>
#include <string_view>

namespace spmvd {

// True when `bytes` begins with the gzip magic number (1f 8b).
bool looks_gzipped(std::string_view bytes) noexcept;

// Inflates a complete gzip stream. Throws Error(invalid_argument) on corrupt or truncated
// input, Error(resource_exhausted) when the output would exceed max_output_bytes.
std::string gunzip(std::string_view compressed, std::size_t max_output_bytes);

}  // namespace spmvd
