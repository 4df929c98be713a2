#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <variant>

#include "core/error.hpp"
#include "core/field_set.hpp"
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

// A format's parameter struct, as a format declares it, for what a stored plan's params meet
// when the format reads them back.
struct WidthParams {
  std::uint32_t ell_width = 0;
  static constexpr auto kFields = std::tuple{declare_field("ell_width", &WidthParams::ell_width)};
  friend bool operator==(const WidthParams&, const WidthParams&) = default;
};

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
  ASSERT_FALSE(plan.params.empty());
  EXPECT_EQ(j.at("params").size(), plan.params.fields().size());
  for (const NamedField& field : plan.params.fields()) {
    const json expected = std::visit([](const auto& value) { return json(value); }, field.value);
    EXPECT_EQ(j.at("params").at(field.name), expected) << field.name;
  }
}

TEST(PlanJson, WritesParamsAsTheFormatsOwnFieldsOnly) {
  Plan plan = test::full_plan();
  plan.params = FieldSet::of(WidthParams{.ell_width = 12});
  EXPECT_EQ(json::parse(plan_to_json(plan)).at("params"), json::parse(R"({"ell_width":12})"));
  plan.params = {};  // a format without parameters
  EXPECT_EQ(json::parse(plan_to_json(plan)).at("params"), json::object());
  EXPECT_EQ(plan_from_json(plan_to_json(plan)), plan);
}

TEST(PlanJson, WritesEachFormatsOwnFeaturesUnderItsName) {
  const json own = full_plan_json().at("features").at("format_features");
  EXPECT_EQ(own.at("cuda_sell").at("sorted_sectors_per_nonzero"), json::parse("[0.25,1.0]"));
  EXPECT_EQ(own.at("cusparse_bsr"),
            json::parse(R"({"block_dims":[2,4],"blocks":[1000000000001,3]})"));
}

TEST(PlanJson, MissingLaunchFieldIsNamed) {
  json j = full_plan_json();
  j["launch"].erase("block_size");
  EXPECT_EQ(decode_error(j.dump()), "plan JSON: field 'launch.block_size' missing");
}

// Plans stored before tuner version 4 (without a sector count, with group_padded, block_counts
// and sorted_gathers instead of format_features) are refused, dropped and re-tuned: there is no
// "not measured" fallback any more.
TEST(PlanJson, PlansWithoutASectorCountAreRefused) {
  json j = full_plan_json();
  ASSERT_DOUBLE_EQ(j["features"]["x_sectors_per_nonzero"].get<double>(), 0.125);
  j["features"].erase("x_sectors_per_nonzero");
  EXPECT_EQ(decode_error(j.dump()), "plan JSON: field 'features.x_sectors_per_nonzero' missing");
}

TEST(PlanJson, PlansWithoutFormatFeaturesAreRefused) {
  json j = full_plan_json();
  j["features"].erase("format_features");
  j["features"]["block_counts"] = json::parse("[[2,6],[4,2]]");  // as tuner version 3 wrote
  j["features"]["group_padded"] = json::array();
  j["features"]["sorted_gathers"] = json::array();
  EXPECT_EQ(decode_error(j.dump()), "plan JSON: field 'features.format_features' missing");
}

TEST(PlanJson, PlansWhoseFormatsComputedNoFeaturesDecodeWithNone) {
  json j = full_plan_json();
  j["features"]["format_features"] = json::object();
  EXPECT_TRUE(plan_from_json(j.dump()).features.format_features.empty());
  // One format's entry dropped: the others' stay.
  j = full_plan_json();
  j["features"]["format_features"].erase("cuda_sell");
  const Plan plan = plan_from_json(j.dump());
  EXPECT_FALSE(plan.features.format_features.contains("cuda_sell"));
  EXPECT_EQ(plan.features.format_features.at("cusparse_bsr"),
            test::full_plan().features.format_features.at("cusparse_bsr"));
}

// A pass that left no format out (spmv-bench's, every pass before tuner version 8) need not
// say so; a list that is there is read exactly.
TEST(PlanJson, FormatsLeftOutAreKeptAndAbsentMeansNone) {
  json j = full_plan_json();
  EXPECT_EQ(j["features"]["formats_left_out"], json::array({"cuda_bro_ell", "cuda_ehyb"}));
  EXPECT_TRUE(plan_from_json(j.dump()).features.left_out("cuda_ehyb"));
  j["features"].erase("formats_left_out");
  EXPECT_TRUE(plan_from_json(j.dump()).features.formats_left_out.empty());
  j["features"]["formats_left_out"] = json::array({"cuda_ehyb", "cuda_bro_ell"});
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.formats_left_out' is not in ascending order");
  j["features"]["formats_left_out"] = json::array({"cuda_ehyb", 7});
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.formats_left_out[1]' has type unsigned integer, expected string");
}

TEST(PlanJson, MalformedFormatFeaturesAreNamed) {
  json j = full_plan_json();
  j["features"]["format_features"]["cuda_sell"]["sorted_sectors_per_nonzero"][1] = "many";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field "
            "'features.format_features.cuda_sell.sorted_sectors_per_nonzero[1]' has type "
            "string, expected number");
  j = full_plan_json();
  j["features"]["format_features"]["cusparse_bsr"]["blocks"] = {{"2", 6}};
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.format_features.cusparse_bsr.blocks' has type object, "
            "expected a number or an array of numbers");
  j = full_plan_json();
  j["features"]["format_features"]["cusparse_bsr"] = "many";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.format_features.cusparse_bsr' has type string, expected "
            "object");
  j = full_plan_json();
  j["features"]["format_features"] = json::array();
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.format_features' has type array, expected object");
}

TEST(PlanJson, MalformedParamsAreNamed) {
  json j = full_plan_json();
  j["params"]["slice_height"] = "32";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'params.slice_height' has type string, expected a number or an "
            "array of numbers");
  j = full_plan_json();
  j["params"]["boundaries"][2] = nullptr;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'params.boundaries[2]' has type null, expected number");
  j = full_plan_json();
  j["params"] = json::array();
  EXPECT_EQ(decode_error(j.dump()), "plan JSON: field 'params' has type array, expected object");
}

// The codec holds any format's parameters; the shape is the format's to check when it reads
// them back (FieldSet::as, through its params_of), naming the field.
TEST(PlanJson, ParamsOfTheWrongShapeAreRefusedByTheFormatNamingTheField) {
  Plan plan = test::full_plan();
  plan.params = FieldSet::of(WidthParams{.ell_width = 12});
  json j = json::parse(plan_to_json(plan));
  ASSERT_EQ(plan_from_json(j.dump()).params.as<WidthParams>("cuda_ell"), WidthParams{12});

  const auto read_back_error = [](const json& written) {
    const Plan decoded = plan_from_json(written.dump());  // the JSON itself is well formed
    try {
      decoded.params.as<WidthParams>("cuda_ell");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
      return std::string(e.what());
    }
    return std::string();
  };
  j["params"]["ell_width"] = -4;
  EXPECT_EQ(read_back_error(j), "cuda_ell: field 'ell_width' value -4 is out of its range");
  j["params"]["ell_width"] = 4294967296ULL;
  EXPECT_EQ(read_back_error(j), "cuda_ell: field 'ell_width' value 4294967296 is out of its range");
  j["params"]["ell_width"] = 2.5;
  EXPECT_EQ(read_back_error(j), "cuda_ell: field 'ell_width' is not an integer");
  j["params"] = json::object();
  EXPECT_EQ(read_back_error(j), "cuda_ell: field 'ell_width' is missing");
  j["params"] = {{"ell_width", 12}, {"slice_height", 32}};  // another format's field as well
  EXPECT_EQ(read_back_error(j), "cuda_ell: field 'slice_height' is not one of its fields");
}

TEST(PlanJson, EveryMissingFieldIsNamed) {
  const Plan plan = test::full_plan();
  // Top-level and nested fields, the nested ones taken from the field lists.
  std::vector<std::pair<std::string, std::string>> fields;  // (object, field)
  const json written = full_plan_json();
  for (const auto& [name, value] : written.items()) fields.emplace_back("", name);
  for (const auto& [name, value] : written.at("features").items()) {
    if (name != "formats_left_out") fields.emplace_back("features", name);  // below
  }
  for (const auto& [name, value] : written.at("tuning").items())
    fields.emplace_back("tuning", name);
  for_each_field(plan.launch, [&](const char* name, auto) { fields.emplace_back("launch", name); });
  // A format's params and own features are FieldSets of whatever fields the format declares: the
  // format, not the codec, requires them (ParamsOfTheWrongShapeAreRefusedByTheFormat...).
  ASSERT_GT(fields.size(), 20u);

  for (const auto& [object, name] : fields) {
    json j = full_plan_json();
    (object.empty() ? j : j[object]).erase(name);
    const std::string path = object.empty() ? name : object + "." + name;
    EXPECT_EQ(decode_error(j.dump()), "plan JSON: field '" + path + "' missing");
  }
}

TEST(PlanJson, AnUnknownTuningModeIsNamed) {
  json j = full_plan_json();
  j["tuning"]["mode"] = "guess";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'tuning.mode' has value \"guess\", expected \"model-only\", "
            "\"verify-top-k\" or \"exhaustive\"");
}

TEST(PlanJson, MistypedFieldIsNamedWithBothTypes) {
  json j = full_plan_json();
  j["launch"]["block_size"] = "256";
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'launch.block_size' has type string, expected unsigned integer");

  j = full_plan_json();
  j["launch"]["threads_per_row"] = -4;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'launch.threads_per_row' has type negative integer, expected "
            "unsigned integer");

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

  j = full_plan_json();
  j["params"]["slice_height"] = 9223372036854775808ULL;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'params.slice_height' exceeds the int64 range");

  j = full_plan_json();
  j["features"]["format_features"]["cusparse_bsr"]["blocks"][0] = 9223372036854775808ULL;
  EXPECT_EQ(decode_error(j.dump()),
            "plan JSON: field 'features.format_features.cusparse_bsr.blocks[0]' exceeds the "
            "int64 range");
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
  j["features"]["written_by_a_newer_tuner"] = 1;
  EXPECT_EQ(plan_from_json(j.dump()), test::full_plan());
}

// Except in params: a field the format does not declare is kept, so that the format refuses it
// (ParamsOfTheWrongShapeAreRefusedByTheFormatNamingTheField) instead of running a plan made for
// another shape.
TEST(PlanJson, UnknownParamsFieldsAreKeptForTheFormatToRefuse) {
  json j = full_plan_json();
  j["params"]["cluster_size"] = 2;
  const Plan plan = plan_from_json(j.dump());
  ASSERT_NE(plan.params.find("cluster_size"), nullptr);
  EXPECT_EQ(plan.params.find("cluster_size")->value, FieldValue{std::int64_t{2}});
  EXPECT_NE(plan, test::full_plan());
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

  plan = test::full_plan();
  plan.params = FieldSet({{"ratio", std::numeric_limits<double>::infinity()}});
  try {
    plan_to_json(plan);
    FAIL() << "an infinite parameter was encoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()),
              "plan JSON params: field 'ratio' is inf, expected a finite number");
  }
  plan = test::full_plan();
  plan.features.format_features["cuda_sell"] =
      FieldSet({{"sorted_sectors_per_nonzero",
                 std::vector<double>{0.5, std::numeric_limits<double>::quiet_NaN()}}});
  try {
    plan_to_json(plan);
    FAIL() << "a NaN feature was encoded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "plan JSON features.cuda_sell: field 'sorted_sectors_per_nonzero' is nan, expected "
              "a finite number");
  }
}

}  // namespace
}  // namespace spmvd
