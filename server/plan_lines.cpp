#include "server/plan_lines.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace spmvd {
namespace {

using nlohmann::json;
using std::to_string;

const json& field(const json& object, const char* key, json::value_t type, const char* type_name) {
  const auto found = object.find(key);
  if (found == object.end()) throw_invalid(std::string("missing \"") + key + "\"");
  // Unsigned and signed integers are one JSON type to people.
  const bool integer_wanted = type == json::value_t::number_unsigned;
  if (integer_wanted ? !found->is_number_unsigned() : found->type() != type)
    throw_invalid(std::string("\"") + key + "\" is not " + type_name);
  return *found;
}

}  // namespace

std::string plan_line(const StoredPlan& stored) {
  const json line{{"fingerprint", stored.key.fingerprint.hex()},
                  {"device", stored.key.device_signature},
                  {"precision", std::string(to_string(stored.key.precision))},
                  {"tuner_version", stored.key.tuner_version},
                  {"model_version", stored.key.model_version},
                  {"updated_unix_ms", stored.updated_ms},
                  {"plan", json::parse(plan_to_json(stored.plan))}};
  return line.dump();  // dump() without indent writes no newline
}

StoredPlan parse_plan_line(std::string_view text, const FormatRegistry& registry) {
  const json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (line.is_discarded()) throw_invalid("not valid JSON");
  if (!line.is_object()) throw_invalid("not a JSON object");

  StoredPlan stored;
  const auto& fingerprint = field(line, "fingerprint", json::value_t::string, "a string");
  const auto parsed = fingerprint_from_hex(fingerprint.get<std::string>());
  if (!parsed) throw_invalid("\"fingerprint\" is not 32 hex digits");
  stored.key.fingerprint = *parsed;
  stored.key.device_signature =
      field(line, "device", json::value_t::string, "a string").get<std::string>();
  if (stored.key.device_signature.empty()) throw_invalid("\"device\" is empty");
  const auto precision = parse_precision(
      field(line, "precision", json::value_t::string, "a string").get<std::string>());
  if (!precision) throw_invalid("\"precision\" is not fp32 or fp64");
  stored.key.precision = *precision;
  const auto version =
      field(line, "tuner_version", json::value_t::number_unsigned, "a non-negative integer")
          .get<std::uint64_t>();
  if (version == 0 || version > UINT32_MAX) throw_invalid("\"tuner_version\" " + to_string(version) + " is out of range");
  stored.key.tuner_version = static_cast<std::uint32_t>(version);
  const auto model_version =
      field(line, "model_version", json::value_t::number_unsigned, "a non-negative integer")
          .get<std::uint64_t>();
  if (model_version == 0 || model_version > UINT32_MAX)
    throw_invalid("\"model_version\" " + to_string(model_version) + " is out of range");
  stored.key.model_version = static_cast<std::uint32_t>(model_version);
  if (const auto updated = line.find("updated_unix_ms"); updated != line.end() && updated->is_number_integer())
    stored.updated_ms = updated->get<std::int64_t>();

  const auto& plan = field(line, "plan", json::value_t::object, "an object");
  try {
    stored.plan = plan_from_json(plan.dump());
  } catch (const Error& e) {
    throw_invalid(std::string("\"plan\": ") + e.what());
  }
  if (stored.plan.precision != stored.key.precision)
    throw_invalid("the plan is for " + std::string(to_string(stored.plan.precision)) +
                  " but the line says " + std::string(to_string(stored.key.precision)));
  if (stored.plan.tuner_version != stored.key.tuner_version)
    throw_invalid("the plan has tuner_version " + to_string(stored.plan.tuner_version) +
                  " but the line says " + to_string(stored.key.tuner_version));
  const FormatEntry* entry = registry.find(stored.plan.format);
  if (entry == nullptr)
    throw_invalid("format " + to_string(stored.plan.format.value) + " (" + stored.plan.format_name +
                  ") is not compiled into this daemon");
  if (entry->rules->name() != stored.plan.format_name)
    throw_invalid("format " + to_string(stored.plan.format.value) + " is " +
                  std::string(entry->rules->name()) + " here, the plan calls it " +
                  stored.plan.format_name);
  return stored;
}

void PlanImporter::add(std::uint64_t line_number, std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  StoredPlan stored;
  try {
    stored = parse_plan_line(line, registry_);
  } catch (const Error& e) {
    problems_.push_back({line_number, e.what()});
    return;
  }
  store_.put(stored.key, stored.plan);
  ++imported_;
}

}  // namespace spmvd
