#include "client/model_table.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace spmvd {
namespace {

using Json = nlohmann::json;
using Row = std::vector<std::string>;

constexpr const char* kDash = "-";

struct Table {
  std::string name;
  std::string title;
  Row headers;
  std::vector<Row> rows;
};

std::string text(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string()
             ? object[key].get<std::string>()
             : kDash;
}

// A row of cells; a cell that is not a string (a summary written by hand) prints as its JSON.
Row cells_of(const Json& row) {
  Row cells;
  if (!row.is_array()) return cells;
  for (const Json& cell : row)
    cells.push_back(cell.is_string() ? cell.get<std::string>() : cell.dump());
  return cells;
}

std::vector<Table> tables_of(const Json& summary) {
  std::vector<Table> tables;
  if (!summary.contains("tables") || !summary["tables"].is_array()) return tables;
  for (const Json& entry : summary["tables"]) {
    if (!entry.is_object()) continue;
    Table table{text(entry, "name"),
                entry.contains("title") ? text(entry, "title") : "",
                entry.contains("headers") ? cells_of(entry["headers"]) : Row{},
                {}};
    if (entry.contains("rows") && entry["rows"].is_array())
      for (const Json& row : entry["rows"]) table.rows.push_back(cells_of(row));
    if (!table.rows.empty()) tables.push_back(std::move(table));
  }
  return tables;
}

// Columns are as wide as their widest cell in characters, not bytes (µ, ρ, κ, – are two or
// three bytes in UTF-8).
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// As many columns as the longest of the headers and rows; a missing header prints empty, a
// missing cell as "-".
void print_table(std::ostream& out, const Table& table) {
  std::vector<std::size_t> widths;
  const auto widen = [&widths](const Row& row) {
    if (widths.size() < row.size()) widths.resize(row.size(), display_width(kDash));
    for (std::size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  };
  widen(table.headers);
  for (const Row& row : table.rows) widen(row);
  const auto print_row = [&](const Row& row, const std::string& missing) {
    std::string line = "   ";
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string& cell = c < row.size() ? row[c] : missing;
      line += "  " + cell + std::string(widths[c] - display_width(cell), ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  };
  print_row(table.headers, "");
  for (const Row& row : table.rows) print_row(row, kDash);
}

}  // namespace

std::string model_tables(const Json& summary) {
  std::ostringstream out;
  const std::string version =
      summary.contains("model_version") ? summary["model_version"].dump() : kDash;
  out << text(summary, "precision") << " models (model version " << version << ", "
      << text(summary, "device_signature") << ")\n";
  for (const Table& table : tables_of(summary)) {
    out << "\n  " << table.name << " (" << table.rows.size() << " fit"
        << (table.rows.size() == 1 ? "" : "s") << (table.title.empty() ? "" : "; ") << table.title
        << ")\n";
    print_table(out, table);
  }
  return out.str();
}

}  // namespace spmvd
