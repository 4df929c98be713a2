#include "bench/generators.hpp"

#include <algorithm>
#include <charconv>
#include <random>
#include <string>

#include "core/error.hpp"
#include "models/sample_generators.hpp"

namespace spmvd {
namespace {

using Rng = std::mt19937_64;

// Uniform integer in [0, n) by the multiply-high method (Lemire 2019); the bias, at most
// n / 2^64, is irrelevant here and the result is identical on every platform (unlike
// std::uniform_int_distribution, whose algorithm the standard leaves open).
__extension__ using Uint128 = unsigned __int128;  // GCC/Clang builtin; -Wpedantic otherwise
std::int64_t uniform_below(Rng& rng, std::int64_t n) {
  return static_cast<std::int64_t>((static_cast<Uint128>(rng()) * static_cast<std::uint64_t>(n)) >> 64);
}

// Uniform in [-1, 1) from the top 53 bits: platform independent, like uniform_below.
double uniform_signed_unit(Rng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0;
}

// Appends `count` distinct sorted values from [lo, hi) to `out`; count <= hi - lo.
// Sparse draws (count <= half the range) sort and top up rejected duplicates; dense draws use
// selection sampling (Knuth, TAOCP vol. 2, Algorithm S), O(hi - lo) = O(count).
void sample_distinct_sorted(Rng& rng, std::int64_t lo, std::int64_t hi, std::int64_t count,
                            std::vector<ColIndex>& out) {
  const std::int64_t range = hi - lo;
  if (count <= 0) return;
  if (2 * count > range) {
    std::int64_t needed = count;
    for (std::int64_t v = lo; v < hi && needed > 0; ++v) {
      if (uniform_below(rng, hi - v) < needed) {
        out.push_back(static_cast<ColIndex>(v));
        --needed;
      }
    }
    return;
  }
  const auto first = static_cast<std::ptrdiff_t>(out.size());
  std::int64_t have = 0;
  while (have < count) {
    for (std::int64_t i = have; i < count; ++i)
      out.push_back(static_cast<ColIndex>(lo + uniform_below(rng, range)));
    std::sort(out.begin() + first, out.end());
    out.erase(std::unique(out.begin() + first, out.end()), out.end());
    have = static_cast<std::int64_t>(out.size()) - first;
  }
}

// Reads a spec's integer parameters, refusing unknown, missing, malformed or out-of-range
// keys with a message that names the key.
class SpecParams {
 public:
  SpecParams(const GeneratorSpec& spec, std::vector<std::string_view> allowed) : spec_(spec) {
    allowed.push_back("seed");
    for (const auto& [key, value] : spec.params) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string expected;
        for (auto name : allowed) expected += (expected.empty() ? "" : ", ") + std::string(name);
        throw_invalid(spec.kind + ": unknown key '" + key + "' (expected " + expected + ")");
      }
    }
  }

  std::int64_t required(std::string_view key, std::int64_t min, std::int64_t max) const {
    const std::string* text = find(key);
    if (!text) throw_invalid(spec_.kind + ": missing key '" + std::string(key) + "'");
    return parse(key, *text, min, max);
  }
  std::int64_t optional(std::string_view key, std::int64_t fallback, std::int64_t min,
                        std::int64_t max) const {
    const std::string* text = find(key);
    return text ? parse(key, *text, min, max) : fallback;
  }
  // Default seed 1: every spec without seed= names one fixed matrix.
  Rng rng() const {
    return Rng(static_cast<std::uint64_t>(optional("seed", 1, 0, std::int64_t{1} << 62)));
  }
  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    throw_invalid(spec_.kind + ": key '" + std::string(key) + "' " + what);
  }

 private:
  const std::string* find(std::string_view key) const {
    for (const auto& [name, value] : spec_.params)
      if (name == key) return &value;
    return nullptr;
  }
  std::int64_t parse(std::string_view key, const std::string& text, std::int64_t min,
                     std::int64_t max) const {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      fail(key, "is not an integer: '" + text + "'");
    if (value < min || value > max)
      fail(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                    text);
    return value;
  }

  const GeneratorSpec& spec_;
};

// Appends rows one at a time; values are filled at the end.
class CsrBuilder {
 public:
  CsrBuilder(std::int64_t rows, std::int64_t cols, std::int64_t expected_nnz) {
    m_.rows = rows;
    m_.cols = cols;
    m_.row_offsets.reserve(static_cast<std::size_t>(rows) + 1);
    m_.col_indices.reserve(static_cast<std::size_t>(std::max<std::int64_t>(expected_nnz, 0)));
  }
  std::vector<ColIndex>& columns() { return m_.col_indices; }
  void end_row() { m_.row_offsets.push_back(static_cast<RowOffset>(m_.col_indices.size())); }
  CsrMatrix<double> finish(Rng& rng) {
    m_.values.resize(m_.col_indices.size());
    for (double& v : m_.values) v = uniform_signed_unit(rng);
    return std::move(m_);
  }

 private:
  CsrMatrix<double> m_;
};

constexpr std::int64_t kMaxDim = kMaxDimension;
// Upper bound on generated nonzeros (2^34 entries = 192 GiB of fp64 CSR): a typo in a spec
// fails fast instead of exhausting host memory.
constexpr std::int64_t kMaxNnz = std::int64_t{1} << 34;

void check_nnz(const SpecParams& p, std::string_view key, double nnz) {
  if (nnz > static_cast<double>(kMaxNnz))
    p.fail(key, "gives about " + std::to_string(static_cast<std::int64_t>(nnz)) +
                    " nonzeros, above the generator limit 2^34");
}

CsrMatrix<double> stencil2d(const SpecParams& p) {
  const std::int64_t n = p.required("n", 1, 46340);  // n*n < 2^31
  const std::int64_t points = p.optional("points", 5, 5, 9);
  if (points != 5 && points != 9) p.fail("points", "must be 5 or 9, got " + std::to_string(points));
  Rng rng = p.rng();
  CsrBuilder b(n * n, n * n, n * n * points);
  auto& cols = b.columns();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      // Offsets in (di, dj) lexicographic order give ascending columns.
      for (std::int64_t di = -1; di <= 1; ++di) {
        for (std::int64_t dj = -1; dj <= 1; ++dj) {
          if (points == 5 && di != 0 && dj != 0) continue;
          const std::int64_t ii = i + di, jj = j + dj;
          if (ii < 0 || ii >= n || jj < 0 || jj >= n) continue;
          cols.push_back(static_cast<ColIndex>(ii * n + jj));
        }
      }
      b.end_row();
    }
  }
  return b.finish(rng);
}

CsrMatrix<double> stencil3d(const SpecParams& p) {
  const std::int64_t n = p.required("n", 1, 1290);  // n^3 < 2^31
  const std::int64_t points = p.optional("points", 7, 7, 27);
  if (points != 7 && points != 27)
    p.fail("points", "must be 7 or 27, got " + std::to_string(points));
  check_nnz(p, "n", static_cast<double>(n * n * n) * static_cast<double>(points));
  Rng rng = p.rng();
  CsrBuilder b(n * n * n, n * n * n, n * n * n * points);
  auto& cols = b.columns();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t k = 0; k < n; ++k) {
        for (std::int64_t di = -1; di <= 1; ++di) {
          for (std::int64_t dj = -1; dj <= 1; ++dj) {
            for (std::int64_t dk = -1; dk <= 1; ++dk) {
              // 7-point: exactly one or zero offsets non-zero.
              if (points == 7 && (di != 0) + (dj != 0) + (dk != 0) > 1) continue;
              const std::int64_t ii = i + di, jj = j + dj, kk = k + dk;
              if (ii < 0 || ii >= n || jj < 0 || jj >= n || kk < 0 || kk >= n) continue;
              cols.push_back(static_cast<ColIndex>((ii * n + jj) * n + kk));
            }
          }
        }
        b.end_row();
      }
    }
  }
  return b.finish(rng);
}

CsrMatrix<double> banded(const SpecParams& p) {
  const std::int64_t rows = p.required("rows", 1, kMaxDim);
  const std::int64_t bandwidth = p.required("bandwidth", 0, rows - 1);
  check_nnz(p, "bandwidth", static_cast<double>(rows) * static_cast<double>(2 * bandwidth + 1));
  Rng rng = p.rng();
  CsrBuilder b(rows, rows, rows * (2 * bandwidth + 1));
  auto& cols = b.columns();
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t last = std::min(rows - 1, i + bandwidth);
    for (std::int64_t c = std::max<std::int64_t>(0, i - bandwidth); c <= last; ++c)
      cols.push_back(static_cast<ColIndex>(c));
    b.end_row();
  }
  return b.finish(rng);
}

CsrMatrix<double> random_uniform(const SpecParams& p) {
  const std::int64_t rows = p.required("rows", 0, kMaxDim);
  const std::int64_t cols_count = p.required("cols", 1, kMaxDim);
  const std::int64_t per_row = p.required("per_row", 0, cols_count);
  check_nnz(p, "per_row", static_cast<double>(rows) * static_cast<double>(per_row));
  Rng rng = p.rng();
  CsrBuilder b(rows, cols_count, rows * per_row);
  for (std::int64_t i = 0; i < rows; ++i) {
    sample_distinct_sorted(rng, 0, cols_count, per_row, b.columns());
    b.end_row();
  }
  return b.finish(rng);
}

CsrMatrix<double> powerlaw(const SpecParams& p) {
  const std::int64_t scale = p.required("scale", 1, 30);
  const std::int64_t edge_factor = p.required("edge_factor", 1, 1024);
  const bool permute = p.optional("permute", 1, 0, 1) == 1;
  const std::int64_t n = std::int64_t{1} << scale;
  const std::int64_t edges = edge_factor * n;
  check_nnz(p, "edge_factor", static_cast<double>(edges));
  Rng rng = p.rng();

  std::vector<ColIndex> label(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) label[v] = static_cast<ColIndex>(v);
  if (permute) {  // Fisher-Yates with uniform_below, platform independent
    for (std::int64_t v = n - 1; v > 0; --v) std::swap(label[v], label[uniform_below(rng, v + 1)]);
  }

  // R-MAT quadrant probabilities a=.57, b=.19, c=.19, d=.05 (Graph500 Kronecker generator;
  // Chakrabarti, Zhan, Faloutsos, SDM 2004) as 16-bit thresholds, 4 levels per 64-bit draw.
  constexpr std::uint32_t kA = 37355, kAB = kA + 12452, kABC = kAB + 12452;
  std::vector<ColIndex> src(static_cast<std::size_t>(edges)), dst(static_cast<std::size_t>(edges));
  for (std::int64_t e = 0; e < edges; ++e) {
    std::int64_t row = 0, col = 0;
    std::uint64_t bits = 0;
    for (std::int64_t level = 0; level < scale; ++level) {
      if (level % 4 == 0) bits = rng();
      const auto r = static_cast<std::uint32_t>(bits & 0xFFFF);
      bits >>= 16;
      // Quadrants a=(0,0) b=(0,1) c=(1,0) d=(1,1), branch-free (the draws are unpredictable).
      row = (row << 1) | (r >= kAB);
      col = (col << 1) | ((r >= kA) ^ (r >= kAB) ^ (r >= kABC));
    }
    src[e] = label[row];
    dst[e] = label[col];
  }
  label = {};

  // Counting sort by source row, then sort and merge duplicates within each row.
  CsrMatrix<double> m;
  m.rows = n;
  m.cols = n;
  m.row_offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t e = 0; e < edges; ++e) ++m.row_offsets[src[e] + 1];
  for (std::int64_t r = 0; r < n; ++r) m.row_offsets[r + 1] += m.row_offsets[r];
  m.col_indices.resize(static_cast<std::size_t>(edges));
  {
    std::vector<RowOffset> next(m.row_offsets.begin(), m.row_offsets.end() - 1);
    for (std::int64_t e = 0; e < edges; ++e) m.col_indices[next[src[e]]++] = dst[e];
  }
  src = {};
  dst = {};
  RowOffset write = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    const auto begin = m.col_indices.begin() + m.row_offsets[r];
    const auto end = m.col_indices.begin() + m.row_offsets[r + 1];
    std::sort(begin, end);
    const auto unique_end = std::unique(begin, end);
    m.row_offsets[r] = write;
    write = static_cast<RowOffset>(
        std::copy(begin, unique_end, m.col_indices.begin() + write) - m.col_indices.begin());
  }
  m.row_offsets[n] = write;
  m.col_indices.resize(static_cast<std::size_t>(write));
  m.col_indices.shrink_to_fit();
  m.values.resize(m.col_indices.size());
  for (double& v : m.values) v = uniform_signed_unit(rng);
  return m;
}

CsrMatrix<double> circuit(const SpecParams& p) {
  const std::int64_t rows = p.required("rows", 1, kMaxDim);
  const std::int64_t dense_rows = p.required("dense_rows", 0, rows);
  const std::int64_t dense_len = p.required("dense_len", 1, rows);
  check_nnz(p, "dense_len", static_cast<double>(dense_rows) * static_cast<double>(dense_len));
  Rng rng = p.rng();
  std::vector<ColIndex> dense_at;
  sample_distinct_sorted(rng, 0, rows, dense_rows, dense_at);
  CsrBuilder b(rows, rows, rows * 4 + dense_rows * dense_len);
  auto& cols = b.columns();
  std::size_t next_dense = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (next_dense < dense_at.size() && dense_at[next_dense] == i) {
      // A supply or ground net: one node coupled to many.
      sample_distinct_sorted(rng, 0, rows, dense_len, cols);
      ++next_dense;
    } else {
      const auto first = static_cast<std::ptrdiff_t>(cols.size());
      cols.push_back(static_cast<ColIndex>(i));
      const std::int64_t neighbours = 1 + uniform_below(rng, 5);
      for (std::int64_t k = 0; k < neighbours; ++k) {
        // Mostly nearby nodes (netlists are numbered roughly by locality), one in eight
        // anywhere in the circuit.
        const std::int64_t c = uniform_below(rng, 8) == 0
                                   ? uniform_below(rng, rows)
                                   : i - 16 + uniform_below(rng, 33);
        if (c >= 0 && c < rows) cols.push_back(static_cast<ColIndex>(c));
      }
      std::sort(cols.begin() + first, cols.end());
      cols.erase(std::unique(cols.begin() + first, cols.end()), cols.end());
    }
    b.end_row();
  }
  return b.finish(rng);
}

CsrMatrix<double> road(const SpecParams& p) {
  const std::int64_t rows = p.required("rows", 2, kMaxDim);
  const std::int64_t window = p.optional("window", 64, 2, kMaxDim);
  Rng rng = p.rng();
  CsrBuilder b(rows, rows, rows * 3);
  auto& cols = b.columns();
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t lo = std::max<std::int64_t>(0, i - window);
    const std::int64_t hi = std::min(rows, i + window + 1);
    const std::int64_t degree = std::min<std::int64_t>(2 + uniform_below(rng, 3), hi - lo - 1);
    // Sample from the window without i: draw from [lo, hi - 1) and shift values >= i by one
    // (monotone, so the order stays sorted).
    const auto first = cols.size();
    sample_distinct_sorted(rng, lo, hi - 1, degree, cols);
    for (auto k = first; k < cols.size(); ++k)
      if (cols[k] >= i) ++cols[k];
    b.end_row();
  }
  return b.finish(rng);
}

CsrMatrix<double> widerows(const SpecParams& p) {
  const std::int64_t rows = p.required("rows", 0, kMaxDim);
  const std::int64_t cols_count = p.required("cols", 1, kMaxDim);
  const std::int64_t per_row = p.required("per_row", 1, cols_count);
  check_nnz(p, "per_row", static_cast<double>(rows) * static_cast<double>(per_row));
  Rng rng = p.rng();
  CsrBuilder b(rows, cols_count, rows * per_row);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t length =
        std::min(cols_count, per_row / 2 + uniform_below(rng, per_row + 1));
    sample_distinct_sorted(rng, 0, cols_count, length, b.columns());
    b.end_row();
  }
  return b.finish(rng);
}

// The node pattern of fem: node i couples to itself and `coupling` nodes within
// +-2*coupling nodes; blocked_sample (models/sample_generators.hpp, calibration's dense-block
// samples) turns every coupling into a dense block x block block.
CsrMatrix<double> fem(const SpecParams& p) {
  const std::int64_t block = p.required("block", 1, 64);
  const std::int64_t blocks = p.required("blocks", 1, kMaxDim / block);
  const std::int64_t coupling = p.required("coupling", 0, 256);
  check_nnz(p, "coupling", static_cast<double>(blocks * block) *
                               static_cast<double>((coupling + 1) * block));
  Rng rng = p.rng();
  CsrMatrix<double> pattern;
  pattern.rows = pattern.cols = blocks;
  pattern.row_offsets.reserve(static_cast<std::size_t>(blocks) + 1);  // holds its first 0
  pattern.col_indices.reserve(static_cast<std::size_t>(blocks * (coupling + 1)));
  std::vector<ColIndex> nodes;
  for (std::int64_t node = 0; node < blocks; ++node) {
    const std::int64_t lo = std::max<std::int64_t>(0, node - 2 * coupling);
    const std::int64_t hi = std::min(blocks, node + 2 * coupling + 1);
    nodes.clear();
    sample_distinct_sorted(rng, lo, hi - 1, std::min(coupling, hi - lo - 1), nodes);
    for (auto& j : nodes)
      if (j >= node) ++j;
    nodes.insert(std::upper_bound(nodes.begin(), nodes.end(), static_cast<ColIndex>(node)),
                 static_cast<ColIndex>(node));
    pattern.col_indices.insert(pattern.col_indices.end(), nodes.begin(), nodes.end());
    pattern.row_offsets.push_back(static_cast<RowOffset>(pattern.col_indices.size()));
  }
  pattern.values.assign(pattern.col_indices.size(), 0.0);
  CsrMatrix<double> m = blocked_sample(pattern, block);
  // Every entry its own value, drawn after the pattern (not one per block).
  for (double& v : m.values) v = uniform_signed_unit(rng);
  return m;
}

struct Generator {
  std::string_view kind;
  std::vector<std::string_view> keys;
  CsrMatrix<double> (*generate)(const SpecParams&);
};

const std::vector<Generator>& generators() {
  static const std::vector<Generator> all = {
      {"stencil2d", {"n", "points"}, stencil2d},
      {"stencil3d", {"n", "points"}, stencil3d},
      {"banded", {"rows", "bandwidth"}, banded},
      {"random", {"rows", "cols", "per_row"}, random_uniform},
      {"powerlaw", {"scale", "edge_factor", "permute"}, powerlaw},
      {"circuit", {"rows", "dense_rows", "dense_len"}, circuit},
      {"road", {"rows", "window"}, road},
      {"widerows", {"rows", "cols", "per_row"}, widerows},
      {"fem", {"blocks", "block", "coupling"}, fem},
  };
  return all;
}

const Generator* find_generator(std::string_view kind) {
  for (const auto& g : generators())
    if (g.kind == kind) return &g;
  return nullptr;
}

std::string known_kinds() {
  std::string out;
  for (const auto& g : generators()) out += (out.empty() ? "" : ", ") + std::string(g.kind);
  return out;
}

}  // namespace

const std::vector<std::string_view>& generator_kinds() {
  static const std::vector<std::string_view> kinds = [] {
    std::vector<std::string_view> out;
    for (const auto& g : generators()) out.push_back(g.kind);
    return out;
  }();
  return kinds;
}

bool looks_like_generator_spec(std::string_view text) {
  const auto colon = text.find(':');
  return colon != std::string_view::npos && find_generator(text.substr(0, colon)) != nullptr;
}

GeneratorSpec parse_generator_spec(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    throw_invalid("generator spec '" + std::string(text) + "': expected kind:key=value,... (kinds: " +
                  known_kinds() + ")");
  GeneratorSpec spec;
  spec.kind = std::string(text.substr(0, colon));
  if (!find_generator(spec.kind))
    throw_invalid("generator spec '" + std::string(text) + "': unknown kind '" + spec.kind +
                  "' (kinds: " + known_kinds() + ")");
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto equals = item.find('=');
    if (equals == std::string_view::npos || equals == 0)
      throw_invalid(spec.kind + ": parameter '" + std::string(item) + "' is not key=value");
    std::string key(item.substr(0, equals));
    for (const auto& [seen, value] : spec.params)
      if (seen == key) throw_invalid(spec.kind + ": key '" + key + "' given twice");
    spec.params.emplace_back(std::move(key), std::string(item.substr(equals + 1)));
  }
  return spec;
}

CsrMatrix<double> generate_matrix(const GeneratorSpec& spec) {
  const Generator* g = find_generator(spec.kind);
  if (!g) throw_invalid("unknown generator kind '" + spec.kind + "' (kinds: " + known_kinds() + ")");
  return g->generate(SpecParams(spec, g->keys));
}

CsrMatrix<double> generate_matrix(std::string_view spec) {
  return generate_matrix(parse_generator_spec(spec));
}

CsrMatrix<double> replicate_block_diagonal(const CsrMatrix<double>& m, std::int64_t copies) {
  if (copies < 1) throw_invalid("replicate_block_diagonal: copies must be >= 1, got " + std::to_string(copies));
  if (m.rows * copies > kMaxDimension || m.cols * copies > kMaxDimension)
    throw_invalid("replicate_block_diagonal: " + std::to_string(copies) + " copies of a " +
                  std::to_string(m.rows) + " x " + std::to_string(m.cols) +
                  " matrix exceed the 2^31-1 dimension limit");
  CsrMatrix<double> out;
  out.rows = m.rows * copies;
  out.cols = m.cols * copies;
  const std::int64_t nnz = m.nnz();
  out.row_offsets.resize(static_cast<std::size_t>(out.rows) + 1);
  out.col_indices.resize(static_cast<std::size_t>(nnz * copies));
  out.values.resize(static_cast<std::size_t>(nnz * copies));
  out.row_offsets[0] = 0;
  for (std::int64_t c = 0; c < copies; ++c) {
    for (std::int64_t r = 0; r < m.rows; ++r)
      out.row_offsets[c * m.rows + r + 1] = c * nnz + m.row_offsets[r + 1];
    const auto shift = static_cast<ColIndex>(c * m.cols);
    for (std::int64_t k = 0; k < nnz; ++k) {
      out.col_indices[c * nnz + k] = m.col_indices[k] + shift;
      out.values[c * nnz + k] = m.values[k];
    }
  }
  return out;
}


}  // namespace spmvd
