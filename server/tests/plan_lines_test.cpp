// Plans as JSON lines: a line round-trips, and a bad line says what is wrong.

#include "server/plan_lines.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "db/sqlite_plan_store.hpp"

namespace spmvd {
namespace {

using ::testing::HasSubstr;

StoredPlan cpu_plan() {
  StoredPlan stored;
  stored.key.fingerprint = Fingerprint{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  stored.key.device_signature = "cpu|test|2 threads";
  stored.key.precision = Precision::fp64;
  stored.key.tuner_version = 3;
  stored.key.model_version = 12;
  stored.plan.format = FormatId{1};
  stored.plan.format_name = "cpu_csr";
  stored.plan.precision = Precision::fp64;
  stored.plan.tuner_version = 3;
  stored.plan.measured_ms = 0.25;
  stored.updated_ms = 1763900000000;
  return stored;
}

std::string parse_error(std::string_view line) {
  try {
    parse_plan_line(line, format_registry());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << line;
  return {};
}

TEST(PlanLines, ALineRoundTrips) {
  const StoredPlan stored = cpu_plan();
  const std::string line = plan_line(stored);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const StoredPlan back = parse_plan_line(line, format_registry());
  EXPECT_EQ(back.key, stored.key);
  EXPECT_EQ(back.plan, stored.plan);
  EXPECT_EQ(back.updated_ms, stored.updated_ms);
}

TEST(PlanLines, BadLinesSayWhatIsWrong) {
  EXPECT_EQ(parse_error("{not json"), "not valid JSON");
  EXPECT_EQ(parse_error("[1,2]"), "not a JSON object");
  EXPECT_EQ(parse_error(R"({"device":"d"})"), "missing \"fingerprint\"");
  EXPECT_EQ(parse_error(R"({"fingerprint":"xyz","device":"d"})"),
            "\"fingerprint\" is not 32 hex digits");
  auto line = nlohmann::json::parse(plan_line(cpu_plan()));
  line["precision"] = "fp16";
  EXPECT_EQ(parse_error(line.dump()), "\"precision\" is not fp32 or fp64");
  line["precision"] = "fp32";
  EXPECT_EQ(parse_error(line.dump()), "the plan is for fp64 but the line says fp32");
  line["precision"] = "fp64";
  line["model_version"] = 0;
  EXPECT_EQ(parse_error(line.dump()), "\"model_version\" 0 is out of range");
  line.erase("model_version");
  EXPECT_EQ(parse_error(line.dump()), "missing \"model_version\"");
  line["model_version"] = 12;
  line["plan"]["format"] = 999;
  EXPECT_THAT(parse_error(line.dump()), HasSubstr("format 999 (cpu_csr) is not compiled into this daemon"));
  line["plan"] = "text";
  EXPECT_EQ(parse_error(line.dump()), "\"plan\" is not an object");
}

TEST(PlanImporter, StoresGoodLinesAndReportsBadOnesByNumber) {
  SqlitePlanStore store({.path = ":memory:"});
  PlanImporter importer(store, format_registry());
  importer.add(1, plan_line(cpu_plan()));
  importer.add(2, "");
  importer.add(3, "{oops");
  importer.add(4, R"({"fingerprint":"00"})");
  EXPECT_EQ(importer.imported(), 1u);
  ASSERT_EQ(importer.problems().size(), 2u);
  EXPECT_EQ(importer.problems()[0].line_number, 3u);
  EXPECT_EQ(importer.problems()[0].message, "not valid JSON");
  EXPECT_EQ(importer.problems()[1].line_number, 4u);
  EXPECT_TRUE(store.find(cpu_plan().key).has_value());
}

}  // namespace
}  // namespace spmvd
