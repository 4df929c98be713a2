#pragma once
// Dense vectors as text files for the CLI: whitespace-separated numbers, '%' or '#' comments.

#include <cstdint>
#include <string>
#include <vector>

namespace spmvd {

// Throws Error(invalid_argument) naming the file and the token position of a bad number,
// Error(not_found) for a missing file.
std::vector<double> read_vector_file(const std::string& path);
void write_vector_file(const std::string& path, const std::vector<double>& v);
std::vector<double> random_vector(std::int64_t n, std::uint64_t seed);

}  // namespace spmvd
