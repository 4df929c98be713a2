#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"
#include "core/plan.hpp"
#include "db/tests/test_plans.hpp"

namespace spmvd {
namespace {

using nlohmann::json;

// The message of the Error(invalid_argument) that decoding text throws ("" when it does not).
std::string decode_error(const std::string& text) {
  try {
    plan_from_json(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    return e.what();
  }
  return "";
}

json full_plan_json() { return json::parse(plan_to_json(test::full_plan())); }

TEST(PlanJson, RoundTripKeepsEveryField) {
  const Plan plan = test::full_plan();
  EXPECT_EQ(plan_from_json(plan_to_json(plan)), plan);
}

TEST(PlanJson, RoundTripKeepsDefaultPlanAndFp64) {
  Plan plan;
  EXPECT_EQ(plan_from_json(plan_to_json(plan)), plan);
  plan = test::full_plan(2);
  plan.precision = Precision::fp64;
  plan.features.distribution.clear();
  EXPECT_EQ(plan_from_json(plan_to_json(plan)), plan);
}

TEST(PlanJson, WritesPrecisionAsTextFormatAsNumberAndDistributionAsPairs) {
  Plan plan = test::full_plan();
  plan.format = FormatId{7};
  plan.format_name = "ell";
  plan.launch = LaunchConfig{.block_size = 256, .threads_per_row = 8, .grid_size = 132};
  const json j = json::parse(plan_to_json(plan));
  EXPECT_EQ(j.at("precision"), "fp32");
  EXPECT_EQ(j.at("format"), 7);
  EXPECT_EQ(j.at("format_name"), "ell");
  EXPECT_EQ(j.at("launch"),
            json::parse(R"({"block_size":256,"threads_per_row":8,"grid_size":132})"));
  EXPECT_EQ(j.at("features").at("distribution"), json::parse(R"([[1,3],[5,2],[1099511627777,1]])"));
}

TEST(PlanJson, EveryLaunchAndParamsFieldIsWrittenUnderItsName) {
  const json j = full_plan_json();
  const Plan plan = test::full_plan();
  for_each_field(plan.launch, [&](const char* name, std::uint32_t value) {
    EXPECT_EQ(j.at("launch").at(name), value) << name;
  });
  for_each_field(plan.params, [&](const char* name, std::uint32_t value) {
    EXPECT_EQ(j.at("params").at(name), value) << name;
  });
}

TEST(PlanJson, MissingLaunchFieldIsNamed) {
  json j = full_plan_json();
  j["launch"].erase("block_size");
  EXPECT_EQ(decode_error(j.dump()), "plan JSON: field 'launch.block_size' missing");
}

TEST(PlanJson, PlansWithoutASectorCountDecodeAsNotMeasured) {
  json j = full_plan_json();
  ASSERT_DOUBLE_EQ(j["features"]["x_sectors_per_nonzero"].get<double>(), 0.125);
  j["features"].erase("x_sectors_per_nonzero");
  EXPECT_DOUBLE_EQ(plan_from_json(j.dump()).features.x_sectors_per_nonzero, -1.0);
}

TEST(PlanJson, PlansWithoutGroupPaddingOrBlockCountsDecodeWithNone) {
  json j = full_plan_json();
  j["features"].erase("group_padded");
  j["features"].erase("block_counts");
  const Plan plan = plan_from_json(j.dump());
  EXPECT_TRUE(plan.features.group_padded.empty());
  EXPECT_TRUE(plan.features.block_counts.empty());
  EXPECT_EQ(plan.features.blocks_for(2), -1);
  EXPECT_EQ(plan.features.padded_for(32), nullptr);
}

TEST(PlanJson, PlansWithoutSortedGathersJudgeSortedWindowsByTheUnsortedOrder) {
  json j = full_plan_json();
  ASSERT_EQ(plan_from_json(j.dump()).features.sorted_x_sectors_per_nonzero(256), 0.25);
  j["features"].erase("sorted_gathers");
  const Plan plan = plan_from_json(j.dump());
  EXPECT_TRUE(plan.features.sorted_gathers.empty());
  EXPECT_EQ(plan.features.sorted_x_sectors_per_nonzero(256), -1.0);
  EXPECT_EQ(plan.features.sorted_x_sectors_per_nonzero(1), 0.125);  // unsorted: no sort
}

TEST(PlanJson, MalformedSortedGathersAreNamed) {
  json j = full_plan_json();
  j["features"]["sorted_gathers"][1] = json::array({256});
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.sorted_gathers[1]' has 1 elements, expected "
            "[window, sectors]");
  j = full_plan_json();
  j["features"]["sorted_gathers"][0][1] = "many";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.sorted_gathers[0][1]' has type string, expected number");
}

TEST(PlanJson, MalformedGroupPaddingIsNamed) {
  json j = full_plan_json();
  j["features"]["group_padded"][1]["distribution"][0] = json::array({1});
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.group_padded[1].distribution[0]' has 1 elements, "
            "expected [length, rows]");
  j = full_plan_json();
  j["features"]["block_counts"] = "many";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.block_counts' has type string, expected array");
}

TEST(PlanJson, EveryMissingFieldIsNamed) {
  const Plan plan = test::full_plan();
  // Top-level and nested fields, the nested ones taken from the field lists.
  std::vector<std::pair<std::string, std::string>> fields;  // (object, field)
  const json written = full_plan_json();
  for (const auto& [name, value] : written.items()) fields.emplace_back("", name);
  for (const auto& [name, value] : written.at("features").items()) {
    fields.emplace_back("features", name);
  }
  for_each_field(plan.launch, [&](const char* name, auto) { fields.emplace_back("launch", name); });
  for_each_field(plan.params, [&](const char* name, auto) { fields.emplace_back("params", name); });
  ASSERT_GT(fields.size(), 20u);

  for (const auto& [object, name] : fields) {
    // Optional: plans stored before model version 6 have neither, before 8 no sector count,
    // before 11 no sorted gathers (the tests above).
    if (object == "features" && (name == "group_padded" || name == "block_counts" ||
                                  name == "x_sectors_per_nonzero" || name == "sorted_gathers"))
      continue;
    json j = full_plan_json();
    (object.empty() ? j : j[object]).erase(name);
    const std::string path = object.empty() ? name : object + "." + name;
    EXPECT_EQ(decode_error(j.dump()), "plan JSON: field '" + path + "' missing");
  }
}

TEST(PlanJson, MistypedFieldIsNamedWithBothTypes) {
  json j = full_plan_json();
  j["launch"]["block_size"] = "256";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'launch.block_size' has type string, expected unsigned integer");

  j = full_plan_json();
  j["params"]["ell_width"] = -4;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'params.ell_width' has type negative integer, expected unsigned "
            "integer");

  j = full_plan_json();
  j["candidates_measured"] = 2.5;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'candidates_measured' has type float, expected unsigned integer");

  j = full_plan_json();
  j["measured_ms"] = nullptr;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'measured_ms' has type null, expected number");

  j = full_plan_json();
  j["features"]["rows"] = true;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.rows' has type boolean, expected integer");

  j = full_plan_json();
  j["format_name"] = 3;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'format_name' has type unsigned integer, expected string");

  j = full_plan_json();
  j["launch"] = json::array();
  EXPECT_EQ(decode_error(j.dump()), "plan JSON: field 'launch' has type array, expected object");
}

TEST(PlanJson, ValuesOutOfRangeAreRefused) {
  json j = full_plan_json();
  j["launch"]["grid_size"] = 4294967296ULL;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'launch.grid_size' value 4294967296 exceeds 4294967295");

  j = full_plan_json();
  j["format"] = 65536;
  EXPECT_EQ(decode_error(j.dump()), "plan JSON: field 'format' value 65536 exceeds 65535");

  j = full_plan_json();
  j["features"]["nnz"] = 9223372036854775808ULL;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.nnz' value 9223372036854775808 exceeds the int64 range");
}

TEST(PlanJson, UnknownPrecisionIsRefused) {
  json j = full_plan_json();
  j["precision"] = "fp16";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'precision' has value \"fp16\", expected \"fp32\" or \"fp64\"");
  j["precision"] = "double";  // an alias parse_precision accepts from people, never written here
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'precision' has value \"double\", expected \"fp32\" or \"fp64\"");
}

TEST(PlanJson, MalformedDistributionEntryIsNamed) {
  json j = full_plan_json();
  j["features"]["distribution"][1] = json::array({5});
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.distribution[1]' has 1 elements, expected [length, rows]");

  j = full_plan_json();
  j["features"]["distribution"][2] = json{{"length", 1}, {"rows", 2}};
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.distribution[2]' has type object, expected array "
            "[length, rows]");

  j = full_plan_json();
  j["features"]["distribution"][0][1] = "3";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.distribution[0][1]' has type string, expected integer");

  j = full_plan_json();
  j["features"]["distribution"] = 4;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.distribution' has type unsigned integer, expected array");
}

TEST(PlanJson, UnparsableTextIsRefused) {
  const std::string text = plan_to_json(test::full_plan());
  const std::string truncated = decode_error(text.substr(0, text.size() / 2));
  EXPECT_TRUE(truncated.starts_with("plan JSON: parse error: ")) << truncated;
  EXPECT_TRUE(decode_error("").starts_with("plan JSON: parse error: "));
  EXPECT_EQ(decode_error("[1, 2]"), "plan JSON: top level has type array, expected object");
}

TEST(PlanJson, UnknownFieldsAreIgnored) {
  json j = full_plan_json();
  j["written_by_a_newer_tuner"] = {1, 2, 3};
  j["launch"]["cluster_size"] = 2;
  EXPECT_EQ(plan_from_json(j.dump()), test::full_plan());
}

TEST(PlanJson, NonFiniteTimesAreRefusedWhenWriting) {
  Plan plan = test::full_plan();
  plan.measured_ms = std::numeric_limits<double>::quiet_NaN();
  try {
    plan_to_json(plan);
    FAIL() << "a NaN measured_ms was encoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()),
              "plan JSON: field 'measured_ms' is nan, expected a finite number");
  }
  plan = test::full_plan();
  plan.features.row_length_stddev = std::numeric_limits<double>::infinity();
  EXPECT_THROW(plan_to_json(plan), Error);
}

}  // namespace
}  // namespace spmvd
