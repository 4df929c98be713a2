#include "kernels/format_registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/tests/hand_written.hpp"

namespace spmvd {
namespace {

using ::testing::HasSubstr;

class FakeRules final : public FormatRules {
 public:
  FakeRules(std::uint16_t id, std::string name) : id_{id}, name_(std::move(name)) {}
  FormatId id() const noexcept override { return id_; }
  std::string_view name() const noexcept override { return name_; }
  bool needs_gpu() const noexcept override { return false; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t) const override {
    return true;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {Candidate{.format = id_, .params = {}, .launch = {.block_size = 64}}};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return 0;
  }

 private:
  FormatId id_;
  std::string name_;
};

std::unique_ptr<SpmvOperator> build_nothing(const BuildSource&, Precision,
                                          const Candidate&) {
  throw Error(ErrorCode::internal, "not built in this test");
}

TEST(FormatRegistry, RefusesADuplicateId) {
  FormatRegistry registry;
  registry.add(std::make_unique<FakeRules>(7, "first"), &build_nothing);
  try {
    registry.add(std::make_unique<FakeRules>(7, "second"), &build_nothing);
    FAIL() << "a duplicate id was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::internal);
    EXPECT_THAT(e.what(), HasSubstr("format id 7 of 'second' is already taken by 'first'"));
  }
  EXPECT_EQ(registry.entries().size(), 1U);
}

TEST(FormatRegistry, RefusesADuplicateName) {
  FormatRegistry registry;
  registry.add(std::make_unique<FakeRules>(7, "same"), &build_nothing);
  try {
    registry.add(std::make_unique<FakeRules>(8, "same"), &build_nothing);
    FAIL() << "a duplicate name was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::internal);
    EXPECT_THAT(e.what(), HasSubstr("format name 'same' is already registered (ids 7 and 8)"));
  }
}

TEST(FormatRegistry, FindsEntriesByIdAndByName) {
  FormatRegistry registry;
  registry.add(std::make_unique<FakeRules>(7, "seven"), &build_nothing);
  registry.add(std::make_unique<FakeRules>(9, "nine"), &build_nothing);
  ASSERT_NE(registry.find(FormatId{9}), nullptr);
  EXPECT_EQ(registry.find(FormatId{9})->rules->name(), "nine");
  ASSERT_NE(registry.find("seven"), nullptr);
  EXPECT_EQ(registry.find("seven")->rules->id(), FormatId{7});
  EXPECT_EQ(registry.find(FormatId{8}), nullptr);
  EXPECT_EQ(registry.find("eight"), nullptr);
}

TEST(FormatRegistry, DefaultIsValidAcceptsOnlyProposedCandidates) {
  const FakeRules rules(7, "seven");
  const auto f = testing::features(10, 10, 30);
  const auto device = testing::eight_core_cpu();
  EXPECT_TRUE(rules.is_valid(
      Candidate{.format = FormatId{7}, .params = {}, .launch = {.block_size = 64}}, f, device));
  EXPECT_FALSE(rules.is_valid(
      Candidate{.format = FormatId{7}, .params = {}, .launch = {.block_size = 128}}, f, device));
  EXPECT_FALSE(rules.is_valid(
      Candidate{.format = FormatId{8}, .params = {}, .launch = {.block_size = 64}}, f, device));
}

TEST(FormatRegistry, KeepsTheStoredIdsOfTheBaseFormats) {
  // Ids are in the plan cache: changing one silently invalidates stored plans.
  const FormatRegistry& registry = format_registry();
  ASSERT_NE(registry.find("cpu_csr"), nullptr);
  EXPECT_EQ(registry.find("cpu_csr")->rules->id(), FormatId{1});
#if SPMVD_WITH_CUDA
  ASSERT_NE(registry.find("cuda_csr_vector"), nullptr);
  EXPECT_EQ(registry.find("cuda_csr_vector")->rules->id(), FormatId{2});
  ASSERT_NE(registry.find("cusparse_csr"), nullptr);
  EXPECT_EQ(registry.find("cusparse_csr")->rules->id(), FormatId{3});
#endif
}

TEST(FormatRegistry, HasAFormatForMachinesWithoutAGpu) {
  bool found = false;
  for (const FormatEntry& entry : format_registry().entries())
    found = found ||
            (!entry.rules->needs_gpu() &&
             entry.rules->admissible(testing::features(100, 100, 500), testing::eight_core_cpu(),
                                     Precision::fp64, std::uint64_t{1} << 30));
  EXPECT_TRUE(found);
}

// For every registered format, on the kind of device it needs and a range of shapes: the
// candidate space is non-empty, every candidate carries the format's own id, is accepted by
// is_valid and needs no more bytes in fp32 than in fp64; on the other kind of device the format
// is never admissible (whether it is on its own kind depends on the structure: each format's
// rules test covers that).
TEST(FormatRegistry, EveryFormatProposesValidCandidatesOfItsOwnId) {
  const MatrixFeatures shapes[] = {testing::features(0, 0, 0),
                                   testing::features(1, 1, 1),
                                   testing::features(1000, 1000, 0),
                                   testing::features(1000, 50, 3000),
                                   testing::features(10, 100000, 500000),
                                   testing::features(5000000, 5000000, 25000000)};
  for (const FormatEntry& entry : format_registry().entries()) {
    const FormatRules& rules = *entry.rules;
    const DeviceInfo device = rules.needs_gpu() ? testing::h100() : testing::eight_core_cpu();
    const DeviceInfo other = rules.needs_gpu() ? testing::eight_core_cpu() : testing::h100();
    for (const MatrixFeatures& f : shapes) {
      SCOPED_TRACE(std::string(rules.name()) + " rows=" + std::to_string(f.rows) +
                   " nnz=" + std::to_string(f.nnz));
      const std::vector<Candidate> space = rules.candidates(f, device);
      // A format the matrix does not suit (BSR on rows too short to fill blocks) may offer none.
      if (rules.admissible(f, device, Precision::fp64, ~std::uint64_t{0})) {
        EXPECT_FALSE(space.empty());
      }
      for (const Candidate& candidate : space) {
        EXPECT_EQ(candidate.format, rules.id());
        EXPECT_TRUE(rules.is_valid(candidate, f, device));
        EXPECT_LE(rules.device_bytes(f, Precision::fp32, candidate),
                  rules.device_bytes(f, Precision::fp64, candidate));
      }
      EXPECT_FALSE(rules.admissible(f, other, Precision::fp64, std::uint64_t{16} << 30));
    }
  }
}

}  // namespace
}  // namespace spmvd
