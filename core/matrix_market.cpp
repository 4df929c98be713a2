#include "core/matrix_market.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <istream>
#include <limits>
#include <new>
#include <ostream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/csr_normalize.hpp"
#include "core/error.hpp"

namespace spmvd {
namespace {

using std::to_string;

enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew_symmetric };

struct Header {
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t entries = 0;
  std::int64_t size_line = 0;
};

// Entries as read, 0-based, before mirroring. Values are absent for `pattern`.
struct Triplets {
  std::vector<ColIndex> rows;
  std::vector<ColIndex> cols;
  std::vector<double> values;
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_separator(char c) { return is_blank(c) || c == '\n'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A cursor over the whole text that knows its 1-based line number. The text is parsed in
// place with std::from_chars: no per-line strings, no locale, no istream (the reason a 50M
// entry file parses in seconds rather than minutes).
class Cursor {
 public:
  explicit Cursor(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  std::int64_t line() const { return line_; }
  bool at_end() const { return p_ == end_; }
  bool at_line_end() const { return p_ == end_ || *p_ == '\n'; }

  void skip_blanks() {
    while (p_ != end_ && is_blank(*p_)) ++p_;
  }

  // Moves past the current line's newline (or to the end of the text).
  void next_line() {
    const void* nl = std::memchr(p_, '\n', static_cast<std::size_t>(end_ - p_));
    if (nl == nullptr) {
      p_ = end_;
      return;
    }
    p_ = static_cast<const char*>(nl) + 1;
    ++line_;
  }

  // Skips blank lines and `%` comment lines; stops at the first character of a data line or
  // at the end of the text.
  void skip_comments_and_blank_lines() {
    for (;;) {
      skip_blanks();
      if (p_ == end_) return;
      if (*p_ == '\n' || *p_ == '%') {
        next_line();
        continue;
      }
      return;
    }
  }

  // The current token (up to the next blank or newline), shortened for error messages.
  std::string token() const {
    const char* q = p_;
    while (q != end_ && !is_separator(*q)) ++q;
    std::string t(p_, q);
    if (t.size() > 40) t = t.substr(0, 40) + "...";
    return t;
  }

  std::string_view word() {
    skip_blanks();
    const char* start = p_;
    while (p_ != end_ && !is_separator(*p_)) ++p_;
    return {start, static_cast<std::size_t>(p_ - start)};
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw_invalid("line " + to_string(line_) + ": " + what);
  }

  // Parses one integer token; `what` names it in messages ("row index").
  std::int64_t integer(const char* what) {
    skip_blanks();
    if (at_line_end()) fail("missing " + std::string(what));
    const char* start = p_;
    // from_chars refuses a leading '+', which Matrix Market writers occasionally emit.
    if (*start == '+' && start + 1 != end_ && std::isdigit(static_cast<unsigned char>(start[1])))
      ++start;
    std::int64_t v = 0;
    const auto [q, ec] = std::from_chars(start, end_, v);
    if (ec == std::errc::result_out_of_range)
      fail(std::string(what) + " '" + token() + "' is out of the 64-bit integer range");
    if (ec != std::errc{} || (q != end_ && !is_separator(*q)))
      fail(std::string(what) + " '" + token() + "' is not an integer");
    p_ = q;
    return v;
  }

  // Parses one real token (Fortran `D` exponents accepted, as in old Harwell-Boeing exports).
  double real(const char* what) {
    skip_blanks();
    if (at_line_end()) fail("missing " + std::string(what));
    const char* start = p_;
    if (*start == '+' && start + 1 != end_ &&
        (std::isdigit(static_cast<unsigned char>(start[1])) || start[1] == '.'))
      ++start;
    double v = 0.0;
    auto [q, ec] = std::from_chars(start, end_, v);
    if (ec == std::errc{} && q != end_ && (*q == 'd' || *q == 'D')) {
      char buffer[64];
      const char* stop = q;
      while (stop != end_ && !is_separator(*stop)) ++stop;
      const auto n = static_cast<std::size_t>(stop - start);
      if (n < sizeof buffer) {
        std::memcpy(buffer, start, n);
        buffer[q - start] = 'e';
        const auto r = std::from_chars(buffer, buffer + n, v);
        if (r.ec == std::errc{} && r.ptr == buffer + n) {
          p_ = stop;
          return v;
        }
      }
    }
    if (ec == std::errc::result_out_of_range) {
      // from_chars does not say which way it left the range: strtod (C locale, as here)
      // does. Underflow ("1e-400") rounds to zero as in every other reader; overflow is an
      // error, since an infinite entry is never what a file of finite values meant.
      const std::string text = token();
      const double rounded = std::strtod(text.c_str(), nullptr);
      if (std::fabs(rounded) > std::numeric_limits<double>::min())
        fail(std::string(what) + " '" + text + "' is out of the double range");
      p_ = q;
      return rounded;
    }
    if (ec != std::errc{} || (q != end_ && !is_separator(*q)))
      fail(std::string(what) + " '" + token() + "' is not a number");
    p_ = q;
    return v;
  }

  void expect_line_end(const std::string& after) {
    skip_blanks();
    if (!at_line_end()) fail("unexpected '" + token() + "' after " + after);
  }

 private:
  const char* p_;
  const char* end_;
  std::int64_t line_ = 1;
};

Header parse_banner_and_size(Cursor& cur) {
  Header h;
  const std::string_view magic = cur.word();
  if (lower(magic) != "%%matrixmarket")
    cur.fail("missing %%MatrixMarket banner (found '" + std::string(magic.substr(0, 40)) + "')");
  std::string words[4];
  for (int i = 0; i < 4; ++i) {
    words[i] = lower(cur.word());
    if (words[i].empty())
      cur.fail("banner has " + to_string(i) +
               " words after %%MatrixMarket, expected 4 (object format field symmetry)");
  }
  cur.expect_line_end("the banner's 4 words");

  if (words[0] != "matrix")
    cur.fail("unknown object '" + words[0] + "' (only 'matrix' is supported)");
  if (words[1] == "array")
    cur.fail("the dense 'array' format is not supported (only 'coordinate')");
  if (words[1] != "coordinate")
    cur.fail("unknown format '" + words[1] + "' (only 'coordinate' is supported)");
  if (words[2] == "real")
    h.field = Field::real;
  else if (words[2] == "integer")
    h.field = Field::integer;
  else if (words[2] == "pattern")
    h.field = Field::pattern;
  else if (words[2] == "complex")
    cur.fail("the 'complex' field is not supported (real, integer or pattern only)");
  else
    cur.fail("unknown field '" + words[2] + "' (expected real, integer or pattern)");
  if (words[3] == "general")
    h.symmetry = Symmetry::general;
  else if (words[3] == "symmetric")
    h.symmetry = Symmetry::symmetric;
  else if (words[3] == "skew-symmetric")
    h.symmetry = Symmetry::skew_symmetric;
  else if (words[3] == "hermitian")
    cur.fail("'hermitian' symmetry is not supported (complex values)");
  else
    cur.fail("unknown symmetry '" + words[3] +
             "' (expected general, symmetric or skew-symmetric)");
  if (h.field == Field::pattern && h.symmetry == Symmetry::skew_symmetric)
    cur.fail("'pattern skew-symmetric' is not a valid combination (no values to negate)");
  cur.next_line();

  cur.skip_comments_and_blank_lines();
  if (cur.at_end()) cur.fail("missing size line (rows columns entries)");
  h.size_line = cur.line();
  const char* size_names[3] = {"rows", "columns", "entries"};
  std::int64_t v[3];
  for (int i = 0; i < 3; ++i) {
    cur.skip_blanks();
    if (cur.at_line_end())
      cur.fail("size line has " + to_string(i) + " numbers, expected 3 (rows columns entries)");
    v[i] = cur.integer(size_names[i]);
    if (v[i] < 0) cur.fail("negative number of " + std::string(size_names[i]) + " " + to_string(v[i]));
  }
  cur.expect_line_end("the size line's 3 numbers");
  h.rows = v[0];
  h.cols = v[1];
  h.entries = v[2];
  for (int i = 0; i < 2; ++i)
    if (v[i] > kMaxDimension)
      cur.fail(to_string(v[i]) + " " + size_names[i] + " exceeds the limit " +
               to_string(kMaxDimension) + " (2^31-1)");
  if (h.symmetry != Symmetry::general && h.rows != h.cols)
    cur.fail(words[3] + " matrix must be square, size line says " + to_string(h.rows) + " x " +
             to_string(h.cols));
  // rows, cols < 2^31 so the product fits in 64 bits.
  if (h.entries > h.rows * h.cols)
    cur.fail(to_string(h.entries) + " entries declared, more than rows*cols = " +
             to_string(h.rows * h.cols));
  return h;
}

Triplets parse_entries(Cursor& cur, const Header& h, std::size_t text_bytes,
                       const MatrixMarketOptions& options) {
  Triplets t;
  // Every entry takes at least 4 bytes ("1 1\n"): a bogus size line cannot make us reserve
  // more than the text could hold.
  const auto reserve = static_cast<std::size_t>(
      std::min<std::int64_t>(h.entries, static_cast<std::int64_t>(text_bytes / 4 + 1)));
  t.rows.reserve(reserve);
  t.cols.reserve(reserve);
  if (h.field != Field::pattern) t.values.reserve(reserve);

  const std::string row_range = "[1, " + to_string(h.rows) + "]";
  const std::string col_range = "[1, " + to_string(h.cols) + "]";
  for (std::int64_t k = 0; k < h.entries; ++k) {
    cur.skip_comments_and_blank_lines();
    if (cur.at_end())
      cur.fail("file ends after " + to_string(k) + " of " + to_string(h.entries) +
               " entries declared on the size line (line " + to_string(h.size_line) +
               "): truncated?");
    const std::int64_t i = cur.integer("row index");
    if (i < 1 || i > h.rows) cur.fail("row index " + to_string(i) + " outside " + row_range);
    const std::int64_t j = cur.integer("column index");
    if (j < 1 || j > h.cols) cur.fail("column index " + to_string(j) + " outside " + col_range);
    if (h.symmetry != Symmetry::general) {
      if (j > i)
        cur.fail("entry (" + to_string(i) + ", " + to_string(j) +
                 ") is above the diagonal; a symmetric file stores only the lower triangle "
                 "(row >= column)");
      if (i == j && h.symmetry == Symmetry::skew_symmetric)
        cur.fail("diagonal entry (" + to_string(i) + ", " + to_string(j) +
                 ") in a skew-symmetric file (its diagonal is zero and must not be stored)");
    }
    if (h.field != Field::pattern) {
      double value = 0.0;
      if (h.field == Field::real) {
        value = cur.real("value");
        if (!options.allow_non_finite && !std::isfinite(value))
          cur.fail("value " + std::string(std::isnan(value) ? "NaN" : "Inf") +
                   " is not finite (set allow_non_finite to accept it)");
      } else {
        value = static_cast<double>(cur.integer("integer value"));
      }
      t.values.push_back(value);
    }
    cur.expect_line_end("the entry");
    t.rows.push_back(static_cast<ColIndex>(i - 1));
    t.cols.push_back(static_cast<ColIndex>(j - 1));
    cur.next_line();
  }
  cur.skip_comments_and_blank_lines();
  if (!cur.at_end())
    cur.fail("more entries than the " + to_string(h.entries) +
             " declared on the size line (line " + to_string(h.size_line) + ")");
  return t;
}

// Triplets -> CSR: a counting sort by row (stable, so each row keeps file order), then each
// row sorted by column with duplicates summed in file order (core/csr_normalize.hpp).
// O(nnz + rows) plus the per-row sorts, which are skipped for rows already in order (the
// common case: SuiteSparse files are column-major, which leaves every row sorted after the
// stable scatter).
CsrMatrix<double> build_csr(const Header& h, Triplets&& t) {
  const bool mirror = h.symmetry != Symmetry::general;
  const double mirror_sign = h.symmetry == Symmetry::skew_symmetric ? -1.0 : 1.0;
  const bool pattern = h.field == Field::pattern;
  const std::size_t n = t.rows.size();

  CsrMatrix<double> m;
  m.rows = h.rows;
  m.cols = h.cols;
  m.row_offsets.assign(static_cast<std::size_t>(h.rows) + 1, 0);
  auto& offsets = m.row_offsets;
  for (std::size_t k = 0; k < n; ++k) {
    ++offsets[static_cast<std::size_t>(t.rows[k]) + 1];
    if (mirror && t.rows[k] != t.cols[k]) ++offsets[static_cast<std::size_t>(t.cols[k]) + 1];
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(h.rows); ++r) offsets[r + 1] += offsets[r];
  const auto total = static_cast<std::size_t>(offsets.back());

  std::vector<ColIndex> cols(total);
  std::vector<double> vals(total);
  {
    std::vector<RowOffset> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t k = 0; k < n; ++k) {
      const ColIndex r = t.rows[k], c = t.cols[k];
      const double v = pattern ? 1.0 : t.values[k];
      RowOffset pos = next[static_cast<std::size_t>(r)]++;
      cols[pos] = c;
      vals[pos] = v;
      if (mirror && r != c) {
        pos = next[static_cast<std::size_t>(c)]++;
        cols[pos] = r;
        vals[pos] = mirror_sign * v;
      }
    }
  }
  t = Triplets{};  // release before the row pass

  m.col_indices = std::move(cols);
  m.values = std::move(vals);
  // Rows in file order -> sorted, duplicates summed in file order: the same pass (and the same
  // oneTBB parallelism) as an uploaded CSR gets.
  sort_rows_and_sum_duplicates(m);
  return m;
}

CsrMatrix<double> parse(std::string_view text, const MatrixMarketOptions& options) {
  Cursor cur(text);
  const Header h = parse_banner_and_size(cur);
  if (h.entries > options.max_nnz)
    throw_invalid("line " + to_string(h.size_line) + ": " + to_string(h.entries) +
                  " entries declared, above the limit max_nnz = " + to_string(options.max_nnz));
  Triplets triplets = parse_entries(cur, h, text.size(), options);
  try {
    return build_csr(h, std::move(triplets));
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::resource_exhausted,
                "not enough host memory to build the CSR of a " + to_string(h.rows) + " x " +
                    to_string(h.cols) + " matrix with " + to_string(h.entries) +
                    " stored entries");
  }
}

[[noreturn]] void throw_open_failure(const std::string& path, const char* mode, int err) {
  throw Error(ErrorCode::not_found, "cannot open matrix file '" + path + "' for " + mode + ": " +
                                        std::strerror(err));
}

bool ends_with_gz(const std::string& path) {
  return path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

// gzerror's message, without the "<path>: " prefix zlib puts on it (our message names the file).
std::string errnum_message(gzFile f, int& errnum) {
  std::string msg = gzerror(f, &errnum);
  const auto colon = msg.rfind(": ");
  return colon == std::string::npos ? msg : msg.substr(colon + 2);
}

std::string read_gzip_file(const std::string& path) {
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw_open_failure(path, "reading", errno != 0 ? errno : ENOMEM);
  gzbuffer(f, 1u << 20);
  std::string text;
  constexpr std::size_t kChunkBytes = std::size_t{1} << 24;
  std::size_t used = 0;
  for (;;) {
    if (text.size() < used + kChunkBytes) text.resize(std::max(used + kChunkBytes, 2 * text.size()));
    const int got = gzread(f, text.data() + used, static_cast<unsigned>(kChunkBytes));
    if (got < 0) {
      int errnum = 0;
      const std::string msg = errnum_message(f, errnum);
      gzclose_r(f);
      throw_invalid("matrix file '" + path + "': gzip data is corrupt (" + msg + ")");
    }
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  int errnum = Z_OK;
  const std::string msg = errnum_message(f, errnum);
  // zlib reports a stream that stops early (cut short, or garbage it consumed looking for the
  // end) as Z_BUF_ERROR and returns 0 from gzread, like a clean end: only gzerror / gzclose_r
  // tell them apart.
  const int close_status = gzclose_r(f);
  if (errnum == Z_BUF_ERROR || close_status == Z_BUF_ERROR)
    throw_invalid("matrix file '" + path + "': gzip stream is truncated or corrupt (" +
                  (errnum != Z_OK ? msg : std::string("unexpected end of file")) + ")");
  if (errnum != Z_OK) throw_invalid("matrix file '" + path + "': gzip error (" + msg + ")");
  if (close_status != Z_OK)
    throw_invalid("matrix file '" + path + "': gzip error on close (code " +
                  to_string(close_status) + ")");
  text.resize(used);
  return text;
}

std::string read_plain_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw_open_failure(path, "reading", errno);
  std::string text;
  constexpr std::size_t kChunkBytes = std::size_t{1} << 24;
  std::size_t used = 0;
  for (;;) {
    if (text.size() < used + kChunkBytes) text.resize(std::max(used + kChunkBytes, 2 * text.size()));
    const std::size_t got = std::fread(text.data() + used, 1, kChunkBytes, f);
    used += got;
    if (got < kChunkBytes) break;
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed)
    throw Error(ErrorCode::internal,
                "error reading matrix file '" + path + "': " + std::strerror(err));
  text.resize(used);
  return text;
}

// Formats the matrix in chunks of about 1 MiB and hands each to `sink`.
void format_matrix_market(const CsrMatrix<double>& m,
                          const std::function<void(const char*, std::size_t)>& sink) {
  validate(m, /*allow_non_finite=*/true);
  std::string header = "%%MatrixMarket matrix coordinate real general\n" + to_string(m.rows) +
                       " " + to_string(m.cols) + " " + to_string(m.nnz()) + "\n";
  sink(header.data(), header.size());
  constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  // Longest line: 10 + 1 + 10 + 1 + 24 ("-2.2250738585072014e-308") + 1 bytes < kLineBytes.
  constexpr std::size_t kLineBytes = 64;
  std::string buffer(kFlushBytes + kLineBytes, '\0');
  std::size_t used = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      char* const line_end = buffer.data() + used + kLineBytes;
      auto res = std::to_chars(buffer.data() + used, line_end, r + 1);
      *res.ptr = ' ';
      res = std::to_chars(res.ptr + 1, line_end, static_cast<std::int64_t>(m.col_indices[k]) + 1);
      *res.ptr = ' ';
      // Same digits as printf("%.17g"): enough to round-trip every double.
      res = std::to_chars(res.ptr + 1, line_end - 1, m.values[k], std::chars_format::general, 17);
      *res.ptr = '\n';
      used = static_cast<std::size_t>(res.ptr + 1 - buffer.data());
      if (used >= kFlushBytes) {
        sink(buffer.data(), used);
        used = 0;
      }
    }
  }
  if (used != 0) sink(buffer.data(), used);
}

}  // namespace

CsrMatrix<double> read_matrix_market_text(const std::string& text,
                                          const MatrixMarketOptions& options) {
  return parse(text, options);
}

CsrMatrix<double> read_matrix_market(std::istream& in, const MatrixMarketOptions& options) {
  std::string text;
  constexpr std::size_t kChunkBytes = std::size_t{1} << 22;
  std::size_t used = 0;
  while (in) {
    text.resize(used + kChunkBytes);
    in.read(text.data() + used, static_cast<std::streamsize>(kChunkBytes));
    used += static_cast<std::size_t>(in.gcount());
  }
  if (in.bad()) throw Error(ErrorCode::internal, "error reading Matrix Market stream");
  text.resize(used);
  return parse(text, options);
}

CsrMatrix<double> read_matrix_market_file(const std::string& path,
                                          const MatrixMarketOptions& options) {
  const std::string text = ends_with_gz(path) ? read_gzip_file(path) : read_plain_file(path);
  try {
    return parse(text, options);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

void write_matrix_market(std::ostream& out, const CsrMatrix<double>& m) {
  format_matrix_market(m, [&](const char* data, std::size_t n) {
    out.write(data, static_cast<std::streamsize>(n));
  });
  out.flush();
  if (!out) throw Error(ErrorCode::internal, "error writing Matrix Market stream");
}

void write_matrix_market_file(const std::string& path, const CsrMatrix<double>& m) {
  if (ends_with_gz(path)) {
    errno = 0;
    // Level 1: on Matrix Market text it is ~7x faster than zlib's default level 6 for files
    // only ~7% larger (gzip -1 vs -6 on 100 MB of "%d %d %.17g" lines, measured on the project's dev VM).
    gzFile f = gzopen(path.c_str(), "wb1");
    if (f == nullptr) throw_open_failure(path, "writing", errno != 0 ? errno : ENOMEM);
    gzbuffer(f, 1u << 20);
    try {
      format_matrix_market(m, [&](const char* data, std::size_t n) {
        if (gzwrite(f, data, static_cast<unsigned>(n)) != static_cast<int>(n)) {
          int errnum = 0;
          throw Error(ErrorCode::internal,
                      "error writing '" + path + "': " + gzerror(f, &errnum));
        }
      });
    } catch (...) {
      gzclose_w(f);
      throw;
    }
    if (gzclose_w(f) != Z_OK)
      throw Error(ErrorCode::internal, "error closing '" + path + "' (gzip flush failed)");
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw_open_failure(path, "writing", errno);
  try {
    format_matrix_market(m, [&](const char* data, std::size_t n) {
      if (std::fwrite(data, 1, n, f) != n)
        throw Error(ErrorCode::internal,
                    "error writing '" + path + "': " + std::strerror(errno));
    });
  } catch (...) {
    std::fclose(f);
    throw;
  }
  if (std::fclose(f) != 0)
    throw Error(ErrorCode::internal, "error closing '" + path + "': " + std::strerror(errno));
}

}  // namespace spmvd
