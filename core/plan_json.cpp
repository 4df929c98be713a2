#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "core/field_set_json.hpp"
#include "core/plan.hpp"

// A plan's JSON is a cache row (db/): decoding must reject anything that is not exactly what
// plan_to_json writes, naming the field, so that a corrupt or outdated row is dropped and
// re-tuned instead of steering a kernel launch. Unknown fields are ignored (a newer binary may
// add some); a missing field is an error, so adding a field to LaunchConfig or the features
// makes older rows fail to decode and be re-tuned, which is the safe direction. A format's
// parameters and own features are FieldSets here; the format checks their shape when it
// revalidates a stored plan (FormatRules::is_valid).

namespace spmvd {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what) { throw_invalid("plan JSON: " + what); }

// nlohmann's type_name() says "number" for all three number kinds; the message should say
// which one it was.
std::string describe_type(const json& value) {
  switch (value.type()) {
    case json::value_t::number_unsigned:
      return "unsigned integer";
    case json::value_t::number_integer:
      return "negative integer";
    case json::value_t::number_float:
      return "float";
    default:
      return value.type_name();
  }
}

[[noreturn]] void fail_type(const std::string& path, const json& value, const char* expected) {
  fail("field '" + path + "' has type " + describe_type(value) + ", expected " + expected);
}

const json& member(const json& object, const std::string& prefix, const char* name) {
  const std::string path = prefix.empty() ? name : prefix + "." + name;
  const auto it = object.find(name);
  if (it == object.end()) fail("field '" + path + "' missing");
  return *it;
}

std::string join(const std::string& prefix, const char* name) {
  return prefix.empty() ? std::string(name) : prefix + "." + name;
}

template <typename Unsigned>
Unsigned read_unsigned(const json& value, const std::string& path) {
  if (!value.is_number_unsigned()) fail_type(path, value, "unsigned integer");
  const auto raw = value.get<std::uint64_t>();
  if (raw > std::numeric_limits<Unsigned>::max()) {
    fail("field '" + path + "' value " + std::to_string(raw) + " exceeds " +
         std::to_string(std::numeric_limits<Unsigned>::max()));
  }
  return static_cast<Unsigned>(raw);
}

std::int64_t read_int64(const json& value, const std::string& path) {
  // nlohmann stores non-negative literals as unsigned, negative ones as signed.
  if (value.is_number_integer() && !value.is_number_unsigned()) return value.get<std::int64_t>();
  if (!value.is_number_unsigned()) fail_type(path, value, "integer");
  const auto raw = value.get<std::uint64_t>();
  if (raw > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail("field '" + path + "' value " + std::to_string(raw) + " exceeds the int64 range");
  }
  return static_cast<std::int64_t>(raw);
}

double read_double(const json& value, const std::string& path) {
  // Integral literals are accepted: "0" and "0.0" are the same time to a person editing a row.
  if (!value.is_number()) fail_type(path, value, "number");
  return value.get<double>();
}

const json& read_object(const json& value, const std::string& path) {
  if (!value.is_object()) fail_type(path, value, "object");
  return value;
}

template <typename Fields>
json fields_to_json(const Fields& fields) {
  json out = json::object();
  for_each_field(fields, [&](const char* name, const auto& field) { out[name] = field; });
  return out;
}

template <typename Fields>
Fields fields_from_json(const json& object, const std::string& path) {
  read_object(object, path);
  Fields fields;
  for_each_field(fields, [&](const char* name, auto& field) {
    using Field = std::remove_cvref_t<decltype(field)>;
    static_assert(std::is_unsigned_v<Field>, "plan_json.cpp decodes unsigned fields only");
    field = read_unsigned<Field>(member(object, path, name), join(path, name));
  });
  return fields;
}

// JSON has no NaN or infinity (nlohmann would write null, which then fails to decode): refuse
// them on the way in so that every stored row decodes.
double finite(double value, const char* path) {
  if (!std::isfinite(value)) {
    throw_invalid("plan JSON: field '" + std::string(path) + "' is " + std::to_string(value) +
                  ", expected a finite number");
  }
  return value;
}

// A two-element array entry of a list field, its shape named in errors (e.g. "[length, rows]").
void require_pair(const json& entry, const std::string& entry_path, const std::string& shape) {
  if (!entry.is_array()) fail_type(entry_path, entry, ("array " + shape).c_str());
  if (entry.size() != 2) {
    fail("field '" + entry_path + "' has " + std::to_string(entry.size()) + " elements, expected " +
         shape);
  }
}

// Calls read(entry, entry_path) on each entry of the array field at path, entry_path naming
// it by index ("path[i]") for errors.
template <typename Read>
void for_each_entry(const json& array, const std::string& path, Read read) {
  if (!array.is_array()) fail_type(path, array, "array");
  for (std::size_t i = 0; i < array.size(); ++i)
    read(array[i], path + "[" + std::to_string(i) + "]");
}

// An array of [a, b] integer pairs (a distribution's [length, rows], a block count's
// [block_dim, blocks]).
std::vector<RowLengthCount> read_length_counts(const json& array, const std::string& path) {
  std::vector<RowLengthCount> out;
  for_each_entry(array, path, [&out](const json& entry, const std::string& entry_path) {
    require_pair(entry, entry_path, "[length, rows]");
    out.push_back(RowLengthCount{.length = read_int64(entry[0], entry_path + "[0]"),
                                 .rows = read_int64(entry[1], entry_path + "[1]")});
  });
  return out;
}

json features_to_json(const MatrixFeatures& f) {
  json distribution = json::array();
  for (const RowLengthCount& set : f.distribution) {
    distribution.push_back(json::array({set.length, set.rows}));
  }
  json format_features = json::object();
  for (const auto& [format, fields] : f.format_features)
    format_features[format] = field_set_to_json(fields, "plan JSON features." + format);
  return json{
      {"rows", f.rows},
      {"cols", f.cols},
      {"nnz", f.nnz},
      {"row_length_min", f.row_length_min},
      {"row_length_max", f.row_length_max},
      {"row_length_mean", finite(f.row_length_mean, "features.row_length_mean")},
      {"row_length_stddev", finite(f.row_length_stddev, "features.row_length_stddev")},
      {"empty_rows", f.empty_rows},
      {"distribution", std::move(distribution)},
      {"mean_row_span_fraction",
       finite(f.mean_row_span_fraction, "features.mean_row_span_fraction")},
      {"x_sectors_per_nonzero", finite(f.x_sectors_per_nonzero, "features.x_sectors_per_nonzero")},
      {"format_features", std::move(format_features)},
      {"formats_left_out", f.formats_left_out},
  };
}

MatrixFeatures features_from_json(const json& object, const std::string& path) {
  read_object(object, path);
  const auto int64_field = [&](const char* name) {
    return read_int64(member(object, path, name), join(path, name));
  };
  const auto double_field = [&](const char* name) {
    return read_double(member(object, path, name), join(path, name));
  };
  MatrixFeatures f;
  f.rows = int64_field("rows");
  f.cols = int64_field("cols");
  f.nnz = int64_field("nnz");
  f.row_length_min = int64_field("row_length_min");
  f.row_length_max = int64_field("row_length_max");
  f.row_length_mean = double_field("row_length_mean");
  f.row_length_stddev = double_field("row_length_stddev");
  f.empty_rows = int64_field("empty_rows");
  f.mean_row_span_fraction = double_field("mean_row_span_fraction");
  f.x_sectors_per_nonzero = double_field("x_sectors_per_nonzero");
  f.distribution = read_length_counts(member(object, path, "distribution"),
                                      join(path, "distribution"));
  const std::string own_path = join(path, "format_features");
  const json& own = read_object(member(object, path, "format_features"), own_path);
  for (const auto& [format, fields] : own.items())
    f.format_features.emplace(format,
                              field_set_from_json(fields, "plan JSON", own_path + "." + format));
  // Absent from the features of a pass that left no format out (spmv-bench's, and every pass
  // before tuner version 8).
  if (object.contains("formats_left_out")) {
    const std::string left_out_path = join(path, "formats_left_out");
    for_each_entry(object["formats_left_out"], left_out_path,
                   [&f](const json& entry, const std::string& entry_path) {
                     if (!entry.is_string()) fail_type(entry_path, entry, "string");
                     f.formats_left_out.push_back(entry.get<std::string>());
                   });
    if (!std::is_sorted(f.formats_left_out.begin(), f.formats_left_out.end()))
      fail("field '" + left_out_path + "' is not in ascending order");
  }
  return f;
}

Precision precision_from_json(const json& value) {
  if (!value.is_string()) fail_type("precision", value, "string");
  const auto& text = value.get_ref<const std::string&>();
  // Only the two spellings plan_to_json writes; parse_precision's aliases are for people.
  if (text == "fp32") return Precision::fp32;
  if (text == "fp64") return Precision::fp64;
  fail("field 'precision' has value \"" + text + "\", expected \"fp32\" or \"fp64\"");
}

json tuning_to_json(const TuningRecord& t) {
  return json{
      {"mode", std::string(to_string(t.mode))},
      {"k", t.k},
      {"expected_multiplies", t.expected_multiplies},
      {"budget_ms", finite(t.budget_ms, "tuning.budget_ms")},
      {"features_ms", finite(t.cost.features_ms, "tuning.features_ms")},
      {"ranking_ms", finite(t.cost.ranking_ms, "tuning.ranking_ms")},
      {"builds_ms", finite(t.cost.builds_ms, "tuning.builds_ms")},
      {"measurements_ms", finite(t.cost.measurements_ms, "tuning.measurements_ms")},
      {"total_ms", finite(t.cost.total_ms, "tuning.total_ms")},
  };
}

TuningRecord tuning_from_json(const json& object) {
  const std::string path = "tuning";
  read_object(object, path);
  const auto double_field = [&](const char* name) {
    return read_double(member(object, path, name), join(path, name));
  };
  TuningRecord t;
  const json& mode = member(object, path, "mode");
  if (!mode.is_string()) fail_type("tuning.mode", mode, "string");
  const auto parsed = parse_tune_mode(mode.get<std::string>());
  if (!parsed) fail("field 'tuning.mode' has value \"" + mode.get<std::string>() +
                    "\", expected \"model-only\", \"verify-top-k\" or \"exhaustive\"");
  t.mode = *parsed;
  t.k = read_unsigned<std::uint32_t>(member(object, path, "k"), "tuning.k");
  t.expected_multiplies = read_unsigned<std::uint64_t>(member(object, path, "expected_multiplies"),
                                                       "tuning.expected_multiplies");
  t.budget_ms = double_field("budget_ms");
  t.cost.features_ms = double_field("features_ms");
  t.cost.ranking_ms = double_field("ranking_ms");
  t.cost.builds_ms = double_field("builds_ms");
  t.cost.measurements_ms = double_field("measurements_ms");
  t.cost.total_ms = double_field("total_ms");
  return t;
}

}  // namespace

std::string plan_to_json(const Plan& plan) {
  const json out{
      {"format", plan.format.value},
      {"format_name", plan.format_name},
      {"params", field_set_to_json(plan.params, "plan JSON params")},
      {"launch", fields_to_json(plan.launch)},
      {"precision", std::string(to_string(plan.precision))},
      {"predicted_ms", finite(plan.predicted_ms, "predicted_ms")},
      {"measured_ms", finite(plan.measured_ms, "measured_ms")},
      {"candidates_measured", plan.candidates_measured},
      {"tuner_version", plan.tuner_version},
      {"features", features_to_json(plan.features)},
      {"tuning", tuning_to_json(plan.tuning)},
  };
  return out.dump();
}

Plan plan_from_json(const std::string& text) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(std::string("parse error: ") + e.what());
  }
  if (!root.is_object()) fail("top level has type " + describe_type(root) + ", expected object");

  Plan plan;
  plan.format.value = read_unsigned<std::uint16_t>(member(root, "", "format"), "format");
  const json& name = member(root, "", "format_name");
  if (!name.is_string()) fail_type("format_name", name, "string");
  plan.format_name = name.get<std::string>();
  plan.params = field_set_from_json(member(root, "", "params"), "plan JSON", "params");
  plan.launch = fields_from_json<LaunchConfig>(member(root, "", "launch"), "launch");
  plan.precision = precision_from_json(member(root, "", "precision"));
  plan.predicted_ms = read_double(member(root, "", "predicted_ms"), "predicted_ms");
  plan.measured_ms = read_double(member(root, "", "measured_ms"), "measured_ms");
  plan.candidates_measured =
      read_unsigned<std::uint32_t>(member(root, "", "candidates_measured"), "candidates_measured");
  plan.tuner_version =
      read_unsigned<std::uint32_t>(member(root, "", "tuner_version"), "tuner_version");
  plan.features = features_from_json(member(root, "", "features"), "features");
  plan.tuning = tuning_from_json(member(root, "", "tuning"));
  return plan;
}

}  // namespace spmvd
