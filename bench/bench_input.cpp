#include "bench/bench_input.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/generators.hpp"
#include "core/error.hpp"
#include "core/matrix_market.hpp"

namespace spmvd {
namespace {

std::string default_label(const std::string& source) {
  if (looks_like_generator_spec(source)) return source;
  std::string name = std::filesystem::path(source).filename().string();
  for (const std::string suffix : {".gz", ".mtx"})
    if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  return name;
}

}  // namespace

BenchInput make_bench_input(const std::string& source) {
  return BenchInput{.source = source, .label = default_label(source), .copies = 1};
}

std::vector<BenchInput> parse_suite(std::istream& in, const std::string& origin) {
  std::vector<BenchInput> inputs;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream tokens(line);
    std::string source;
    if (!(tokens >> source)) continue;
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    BenchInput input = make_bench_input(source);
    bool labelled = false;
    for (std::string token; tokens >> token;) {
      if (token.starts_with("label=") && token.size() > 6) {
        input.label = token.substr(6);
        labelled = true;
      } else if (token.starts_with("derived=")) {
        const char* begin = token.data() + 8;
        const char* end = token.data() + token.size();
        const auto [stop, ec] = std::from_chars(begin, end, input.copies);
        if (ec != std::errc() || stop != end || input.copies < 2)
          throw_invalid(where + "derived needs a copy count >= 2, got '" + token.substr(8) + "'");
      } else if (token.starts_with("renumber=")) {
        const char* begin = token.data() + 9;
        const char* end = token.data() + token.size();
        const auto [stop, ec] = std::from_chars(begin, end, input.renumber_seed);
        if (ec != std::errc() || stop != end || input.renumber_seed == 0)
          throw_invalid(where + "renumber needs a seed >= 1, got '" + token.substr(9) + "'");
      } else {
        throw_invalid(where + "unknown token '" + token +
                      "' (expected label=NAME, derived=COPIES or renumber=SEED)");
      }
    }
    if (input.copies > 1 && !labelled) input.label += "-x" + std::to_string(input.copies);
    if (input.renumber_seed > 0 && !labelled) input.label += "-renumbered";
    for (const auto& other : inputs)
      if (other.label == input.label) throw_invalid(where + "label '" + input.label + "' used twice");
    inputs.push_back(std::move(input));
  }
  return inputs;
}

std::vector<BenchInput> read_suite_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::not_found, "suite file '" + path + "' cannot be opened");
  return parse_suite(in, path);
}

CsrMatrix<double> load_bench_input(const BenchInput& input, const std::string& data_dir) {
  CsrMatrix<double> m;
  if (looks_like_generator_spec(input.source)) {
    m = generate_matrix(std::string_view(input.source));
  } else {
    std::filesystem::path path(input.source);
    if (path.is_relative() && !data_dir.empty()) path = std::filesystem::path(data_dir) / path;
    m = read_matrix_market_file(path.string());
  }
  if (input.copies > 1) m = replicate_block_diagonal(m, input.copies);
  if (input.renumber_seed > 0) m = renumber_symmetric(m, input.renumber_seed);
  return m;
}

}  // namespace spmvd
