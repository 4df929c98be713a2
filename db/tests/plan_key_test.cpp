#include "db/plan_key.hpp"

#include <gtest/gtest.h>

#include "core/device_info.hpp"

namespace spmvd {
namespace {

TEST(PlanKey, FingerprintHexRoundTrips) {
  const Fingerprint fingerprint{.high = 0x0123456789abcdefULL, .low = 0xfedcba9876543210ULL};
  ASSERT_EQ(fingerprint.hex(), "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(fingerprint_from_hex(fingerprint.hex()), fingerprint);
  EXPECT_EQ(fingerprint_from_hex(Fingerprint{}.hex()), Fingerprint{});
}

TEST(PlanKey, MalformedFingerprintHexIsRejected) {
  EXPECT_EQ(fingerprint_from_hex(""), std::nullopt);
  EXPECT_EQ(fingerprint_from_hex("0123456789abcdeffedcba987654321"), std::nullopt);    // 31
  EXPECT_EQ(fingerprint_from_hex("0123456789abcdeffedcba98765432100"), std::nullopt);  // 33
  EXPECT_EQ(fingerprint_from_hex("0123456789ABCDEFFEDCBA9876543210"), std::nullopt);   // upper
  EXPECT_EQ(fingerprint_from_hex("0123456789abcdeffedcba987654321g"), std::nullopt);
}

TEST(PlanKey, ToStringNamesEveryComponent) {
  const PlanKey key{Fingerprint{.high = 1, .low = 2}, "gpu|H100", Precision::fp32, 4, 12};
  EXPECT_EQ(to_string(key),
            "fingerprint=00000000000000010000000000000002 device='gpu|H100' precision=fp32 "
            "tuner_version=4 model_version=12");
}

}  // namespace
}  // namespace spmvd

namespace spmvd {
namespace {

// The key's invalidation rules (plan_key.hpp): a driver, CUDA or cuSPARSE upgrade changes the
// device signature, so plans tuned under the old libraries are no longer found.
TEST(PlanKey, DeviceSignatureChangesWithEachLibraryVersion) {
  const DeviceInfo h100{.is_gpu = true,
                        .name = "NVIDIA H100 80GB HBM3",
                        .compute_capability_major = 9,
                        .compute_capability_minor = 0,
                        .sm_count = 132,
                        .memory_bytes = 80ULL << 30,
                        .driver_version = 13000,
                        .runtime_version = 13000,
                        .cusparse_version = 12600};
  EXPECT_EQ(h100.signature(),
            "gpu|NVIDIA H100 80GB HBM3|cc9.0|sm132|mem81920MiB|driver13000|cuda13000|cusparse12600");
  DeviceInfo driver = h100, cuda = h100, cusparse = h100;
  driver.driver_version = 13010;
  cuda.runtime_version = 13010;
  cusparse.cusparse_version = 12700;
  for (const DeviceInfo& upgraded : {driver, cuda, cusparse}) {
    EXPECT_NE(upgraded.signature(), h100.signature());
  }
}

// A calibration times the host too (the split's host part, the copies): the same GPU on another
// host is another device, and its plans and calibration are its own.
TEST(PlanKey, DeviceSignatureNamesTheGpusHost) {
  DeviceInfo on_epyc{.is_gpu = true, .name = "NVIDIA H100 80GB HBM3", .sm_count = 132};
  on_epyc.host = "AMD EPYC 9454 48-Core Processor x16";
  DeviceInfo on_xeon = on_epyc;
  on_xeon.host = "Intel(R) Xeon(R) Platinum 8480+ x16";
  EXPECT_TRUE(on_epyc.signature().ends_with("|host AMD EPYC 9454 48-Core Processor x16"))
      << on_epyc.signature();
  EXPECT_NE(on_epyc.signature(), on_xeon.signature());
}

}  // namespace
}  // namespace spmvd
