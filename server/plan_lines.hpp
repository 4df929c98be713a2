#pragma once
// Stored plans as JSON lines: what `spmvctl plans export` writes and `plans import` reads, to
// seed a new node or cluster (proto/spmvd.proto, ExportPlans). One object per line:
//   {"fingerprint":"…32 hex…","device":"…signature…","precision":"fp64","tuner_version":3,
//    "updated_unix_ms":1763900000000,"plan":{…plan_to_json…}}

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/plan_store.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd {

// One line, no newline.
std::string plan_line(const StoredPlan& stored);

// Decodes and validates one line: well-formed JSON object, every key field present and typed,
// fingerprint of 32 hex digits, precision fp32 or fp64, tuner_version > 0, a plan that decodes
// and agrees with the key (precision, tuner version), and a format this registry has under the
// same name. Throws Error(invalid_argument) saying what is wrong (without the line number,
// which the caller knows).
StoredPlan parse_plan_line(std::string_view line, const FormatRegistry& registry);

}  // namespace spmvd

namespace spmvd {

// Stores the valid lines of an import into `store` and keeps the bad ones' numbers and reasons.
class PlanImporter {
 public:
  struct Problem {
    std::uint64_t line_number = 0;
    std::string message;
  };

  PlanImporter(PlanStore& store, const FormatRegistry& registry)
      : store_(store), registry_(registry) {}
  // Blank lines are skipped. A line that does not validate is recorded, not thrown; an error of
  // the store itself (disk full, locked) throws, ending the import.
  void add(std::uint64_t line_number, std::string_view line);
  std::uint64_t imported() const noexcept { return imported_; }
  const std::vector<Problem>& problems() const noexcept { return problems_; }

 private:
  PlanStore& store_;
  const FormatRegistry& registry_;
  std::uint64_t imported_ = 0;
  std::vector<Problem> problems_;
};

}  // namespace spmvd
