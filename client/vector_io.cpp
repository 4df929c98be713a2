#include "client/vector_io.hpp"

#include <charconv>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.hpp"

namespace spmvd {

std::vector<double> read_vector_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::not_found, "cannot open vector file '" + path + "'");
  std::vector<double> v;
  std::string line;
  for (std::int64_t line_number = 1; std::getline(in, line); ++line_number) {
    if (const auto comment = line.find_first_of("%#"); comment != std::string::npos)
      line.resize(comment);
    std::istringstream tokens(line);
    std::string token;
    while (tokens >> token) {
      double value = 0.0;
      const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (error != std::errc() || end != token.data() + token.size())
        throw_invalid(path + ":" + std::to_string(line_number) + ": '" + token +
                      "' is not a number");
      v.push_back(value);
    }
  }
  return v;
}

void write_vector_file(const std::string& path, const std::vector<double>& v) {
  std::ofstream out(path);
  if (!out) throw Error(ErrorCode::unavailable, "cannot write '" + path + "'");
  out.precision(17);
  for (double value : v) out << value << '\n';
}

std::vector<double> random_vector(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = dist(rng);
  return v;
}

}  // namespace spmvd
