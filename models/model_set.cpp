#include "models/model_set.hpp"

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "models/family_model.hpp"
#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

std::string model_set_to_json(const ModelSet& set) {
  nlohmann::json families = nlohmann::json::object();
  for (const auto& [family, record] : set.records.all()) families[family] = record->to_json();
  const nlohmann::json j = {{"model_version", kModelVersion},
                            {"device_signature", set.device_signature},
                            {"precision", std::string(to_string(set.precision))},
                            {"families", std::move(families)},
                            {"cache_resident", set.cache_resident},
                            {"launch_floor_ms", set.launch_floor_ms},
                            {"measured_refit", set.measured_refit},
                            {"host_build_rates", set.host_build_rates},
                            {"composed_launch_floors", set.composed_launch_floors},
                            {"row_block_waves", set.row_block_waves}};
  return j.dump(2);
}

namespace {

std::string registered_record_families() {
  std::string names;
  for (const FamilyEntry& entry : model_families())
    if (entry.read_record != nullptr)
      names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

// Each family's record by its registry entry's reader; the errors name the family.
FamilyRecords read_records(const nlohmann::json& families) {
  if (!families.is_object()) throw std::invalid_argument("\"families\" is not an object");
  FamilyRecords records;
  for (const auto& [name, value] : families.items()) {
    const FamilyEntry* entry = find_model_family(name);
    if (entry == nullptr)
      throw std::invalid_argument("unknown model family \"" + name + "\" (this build has " +
                                  registered_record_families() + ")");
    if (entry->read_record == nullptr)
      throw std::invalid_argument("model family \"" + name + "\" keeps no record of its own");
    try {
      records.put_record(entry->read_record(value));
    } catch (const std::exception& e) {
      throw std::invalid_argument("family " + name + ": " + e.what());
    }
  }
  return records;
}

}  // namespace

ModelSet model_set_from_json(const std::string& text, const std::string& expected_device_signature,
                             Precision expected_precision) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, std::string("model set JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("model_version") || !j["model_version"].is_number_integer()) {
    throw Error(ErrorCode::invalid_argument, "model set JSON: no integer model_version");
  }
  const int version = j["model_version"].get<int>();
  if (version != kModelVersion) {
    throw Error(ErrorCode::failed_precondition,
                "model set has model_version " + std::to_string(version) +
                    ", this build uses model_version " + std::to_string(kModelVersion) +
                    ": recalibrate");
  }
  ModelSet set;
  try {
    set.device_signature = j.at("device_signature").get<std::string>();
    const auto precision = parse_precision(j.at("precision").get<std::string>());
    if (!precision) {
      throw std::invalid_argument("precision \"" + j.at("precision").get<std::string>() +
                                  "\" is neither fp32 nor fp64");
    }
    set.precision = *precision;
    set.records = read_records(j.at("families"));
    j.at("cache_resident").get_to(set.cache_resident);
    j.at("launch_floor_ms").get_to(set.launch_floor_ms);
    j.at("measured_refit").get_to(set.measured_refit);
    j.at("host_build_rates").get_to(set.host_build_rates);
    j.at("composed_launch_floors").get_to(set.composed_launch_floors);
    j.at("row_block_waves").get_to(set.row_block_waves);
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, std::string("model set JSON: ") + e.what());
  }
  if (set.device_signature != expected_device_signature) {
    throw Error(ErrorCode::failed_precondition,
                "model set was calibrated on device \"" + set.device_signature +
                    "\", this device is \"" + expected_device_signature + "\": recalibrate");
  }
  if (set.precision != expected_precision) {
    throw Error(ErrorCode::failed_precondition,
                "model set is for " + std::string(to_string(set.precision)) + ", wanted " +
                    std::string(to_string(expected_precision)));
  }
  return set;
}

namespace {

// The launch floor as a table of one row; none where it is not calibrated.
FamilyTable launch_floor_table(double launch_floor_ms) {
  FamilyTable table{.name = "launch_floor",
                    .title = "the least time any multiply takes: launch and completion",
                    .headers = {"floor µs"}};
  if (launch_floor_ms > 0.0) table.rows.push_back({number_cell(1e3 * launch_floor_ms, "%.2f")});
  return table;
}

// Appends `table` to summary["tables"] under `family` where it has rows.
void add_table(nlohmann::json& summary, std::string_view family, FamilyTable table) {
  if (table.rows.empty()) return;
  summary["tables"].push_back({{"family", family},
                               {"name", std::move(table.name)},
                               {"title", std::move(table.title)},
                               {"headers", std::move(table.headers)},
                               {"rows", std::move(table.rows)}});
}

}  // namespace

nlohmann::json model_set_summary(const ModelSet& set) {
  nlohmann::json summary = {{"model_version", kModelVersion},
                            {"device_signature", set.device_signature},
                            {"precision", std::string(to_string(set.precision))},
                            {"fits", nlohmann::json::array()},
                            {"tables", nlohmann::json::array()}};
  for (const FamilyEntry& entry : model_families()) {
    const FamilyRecord* record = set.records.find(entry.name);
    if (record == nullptr) continue;
    record->summarize(summary);
    for (FamilyTable& table : record->tables()) add_table(summary, entry.name, std::move(table));
  }
  add_table(summary, "cache_resident", cache_resident_table(set.cache_resident));
  add_table(summary, "launch_floor", launch_floor_table(set.launch_floor_ms));
  add_table(summary, "composed_floors", composed_launch_floors_table(set.composed_launch_floors));
  add_table(summary, "row_block_waves", row_block_waves_table(set.row_block_waves));
  add_table(summary, "measured_refit", measured_refit_table(set.measured_refit));
  add_table(summary, "build_rates", host_build_rates_table(set.host_build_rates));
  for (const CacheResidentCorrection& c : set.cache_resident) {
    // The grid's "log_ms" holds log(measured / predicted) at (row length, rows).
    nlohmann::json fit = c.ratio_vs_length_rows;
    fit["format"] = c.format.value;
    fit["params"] = to_string(c.params);
    fit["block_size"] = c.block_size;
    fit["threads_per_row"] = c.threads_per_row;
    fit["entries_per_thread"] = c.entries_per_thread;
    fit["largest_footprint_bytes"] = c.largest_footprint_bytes;
    if (!c.banded_ratio_vs_length_rows.log_ms.empty())
      fit["banded_ratio_vs_length_rows"] = ratio_table(c.banded_ratio_vs_length_rows, "row_length");
    add_fit_row(summary, "cache_resident", nullptr, "ratio_vs_length_rows", "log_grid",
                std::move(fit));
  }
  if (!set.measured_refit.empty()) summary["measured_refit"] = set.measured_refit;
  return summary;
}

}  // namespace spmvd
