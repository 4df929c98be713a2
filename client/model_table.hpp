#pragma once
// `spmvctl model show` for people: a model set's summary (models/model_set.hpp,
// model_set_summary) as the aligned tables its families and parts wrote into it. The printer
// knows no family: each family's record makes its own table (models/family_table.hpp).

#include <nlohmann/json.hpp>
#include <string>

namespace spmvd {

// A heading for the summary's precision, model version and device signature, then each of
// summary["tables"] in order: a blank line, "  <name> (<n> fit[s]; <title>)", its headers and
// its rows, each column as wide as its widest cell in characters (not UTF-8 bytes), cells two
// spaces apart, "-" for a cell a row lacks. A table without rows is left out. Pure; O(size of
// the summary).
std::string model_tables(const nlohmann::json& summary);

}  // namespace spmvd
