#pragma once
// A model family's fitted record as a ModelSet holds it (models/model_set.hpp): the family's own
// record type R (models/families/<name>/<name>_record.hpp, or its model header) behind a small
// immutable interface, so that the set, its JSON, its `==`, the `spmvctl model show` summary
// and the plots iterate the records without naming a family.
//
// A record type R provides, in its family's folder:
//   static constexpr std::string_view kFamily   its family's name (models/families/registry.cpp)
//   static constexpr auto kFields               its one field list: JSON (models/fit_json.hpp)
//   operator==
//   void add_to_summary(const R&, nlohmann::json& summary)
//                               appends its rows to summary["fits"] (each with "family"), or
//                               for coefficients without fits sets summary[kFamily]
//   std::vector<FamilyTable> tables_of(const R&)
//                               its `spmvctl model show` tables (models/family_table.hpp):
//                               headers and cells from its own fields, with the cells of
//                               models/record_presentation.hpp
//   std::vector<NamedSvg> plots_of(const R&, Precision)   its pictures (may be none)
// and its family's registry line names read_record<R>. The functions are found by
// argument-dependent lookup where RecordOf<R> is instantiated: a record header that does not
// declare them does not compile.

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/precision.hpp"
#include "models/family_table.hpp"
#include "models/fit_json.hpp"
#include "models/svg_plot.hpp"

namespace spmvd {

class FamilyRecord {
 public:
  virtual ~FamilyRecord() = default;
  // The family the record belongs to (R::kFamily).
  virtual std::string_view family() const noexcept = 0;
  // The record's fields (its kFields), as the set's JSON holds them under "families".
  virtual nlohmann::json to_json() const = 0;
  // Same family and every field equal.
  virtual bool equals(const FamilyRecord& other) const noexcept = 0;
  // Adds the record to `spmvctl model show`'s summary (model_set_summary): its rows appended
  // to summary["fits"], or its coefficients as summary[family()].
  virtual void summarize(nlohmann::json& summary) const = 0;
  // Its tables for `spmvctl model show` (model_set_summary's "tables"); a table may have no
  // rows where the record has no fit of that kind.
  virtual std::vector<FamilyTable> tables() const = 0;
  // Its pictures for a set of `precision` (model_set_plots).
  virtual std::vector<NamedSvg> plots(Precision precision) const = 0;
};

template <typename R>
class RecordOf final : public FamilyRecord {
 public:
  explicit RecordOf(R value) : value_(std::move(value)) {}
  const R& value() const noexcept { return value_; }
  std::string_view family() const noexcept override { return R::kFamily; }
  nlohmann::json to_json() const override { return nlohmann::json(value_); }
  bool equals(const FamilyRecord& other) const noexcept override {
    const auto* same = dynamic_cast<const RecordOf<R>*>(&other);
    return same != nullptr && same->value_ == value_;
  }
  void summarize(nlohmann::json& summary) const override { add_to_summary(value_, summary); }
  std::vector<FamilyTable> tables() const override { return tables_of(value_); }
  std::vector<NamedSvg> plots(Precision precision) const override {
    return plots_of(value_, precision);
  }

 private:
  R value_;
};

// The records of one model set, at most one per family, keyed by family name. Records are
// immutable once put; copying the container shares them. Not thread-safe for writes; reads
// of a set nobody writes are.
class FamilyRecords {
 public:
  using Map = std::map<std::string, std::shared_ptr<const FamilyRecord>, std::less<>>;

  // R's record, nullptr where the set has none. O(log families).
  template <typename R>
  const R* find() const noexcept {
    const auto it = records_.find(R::kFamily);
    if (it == records_.end()) return nullptr;
    const auto* typed = dynamic_cast<const RecordOf<R>*>(it->second.get());
    return typed != nullptr ? &typed->value() : nullptr;
  }
  // The record of `family` whatever its type, nullptr where the set has none.
  const FamilyRecord* find(std::string_view family) const noexcept {
    const auto it = records_.find(family);
    return it != records_.end() ? it->second.get() : nullptr;
  }
  // Puts (replaces) R's record.
  template <typename R>
  requires requires { R::kFamily; }
  void put(R record) { put_record(std::make_shared<const RecordOf<R>>(std::move(record))); }
  // Puts (replaces) the record of its family() (a registry's read_record).
  void put_record(std::shared_ptr<const FamilyRecord> record) {
    const std::string family(record->family());
    records_[family] = std::move(record);
  }
  // edit(R&) on a copy of R's record (a default R where there is none), then puts the copy:
  // how calibration stages add their variants one at a time.
  template <typename R, typename Edit>
  void update(Edit&& edit) {
    const R* current = find<R>();
    R copy = current != nullptr ? *current : R{};
    std::forward<Edit>(edit)(copy);
    put(std::move(copy));
  }
  void erase(std::string_view family) {
    if (const auto it = records_.find(family); it != records_.end()) records_.erase(it);
  }
  bool empty() const noexcept { return records_.empty(); }
  std::size_t size() const noexcept { return records_.size(); }
  const Map& all() const noexcept { return records_; }

  friend bool operator==(const FamilyRecords& l, const FamilyRecords& r) noexcept {
    if (l.records_.size() != r.records_.size()) return false;
    for (auto a = l.records_.begin(), b = r.records_.begin(); a != l.records_.end(); ++a, ++b)
      if (a->first != b->first || !a->second->equals(*b->second)) return false;
    return true;
  }

 private:
  Map records_;
};

// A family's record read from its JSON (the registry's read_record): throws what reading R
// throws (a nlohmann::json exception or std::invalid_argument naming the field).
template <typename R>
std::shared_ptr<const FamilyRecord> read_record(const nlohmann::json& j) {
  return std::make_shared<const RecordOf<R>>(j.get<R>());
}

}  // namespace spmvd
