#pragma once
// One table of `spmvctl model show`: what a model family's record (models/family_record.hpp) or
// a cross-family part of a model set (cache_resident, launch floor, measured refit) shows of
// itself, already in cells for people. model_set_summary puts them in the summary's "tables";
// client/model_table.hpp prints them without knowing any family.

#include <string>
#include <vector>

namespace spmvd {

struct FamilyTable {
  // The table's heading: its family's name, or of the part of it the rows are ("format_bytes").
  std::string name;
  // What a row is, in a few words ("ELL kernels; ms over a (width, rows) grid"); may be empty.
  std::string title;
  std::vector<std::string> headers;
  // One per fit, each with a cell per header; "-" where a fit has no value.
  std::vector<std::vector<std::string>> rows{};
  friend bool operator==(const FamilyTable&, const FamilyTable&) = default;
};

}  // namespace spmvd
