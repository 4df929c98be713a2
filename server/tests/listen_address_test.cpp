#include "server/listen_address.hpp"

#include <gtest/gtest.h>

namespace spmvd {
namespace {

TEST(ListenAddress, LoopbackAddressesAreRecognised) {
  for (const char* address : {"127.0.0.1:50051", "127.0.0.2:1", "localhost:50051", "[::1]:50051",
                              "ipv4:127.0.0.1:5", "unix:/run/spmvd.sock", "unix-abstract:spmvd"})
    EXPECT_TRUE(is_loopback_address(address)) << address;
}

TEST(ListenAddress, WildcardsAndOtherHostsAreNotLoopback) {
  for (const char* address : {"0.0.0.0:50051", "[::]:50051", "10.0.0.5:50051", "node7:50051",
                              "128.0.0.1:50051", "[::ffff:10.0.0.1]:1", ":50051"})
    EXPECT_FALSE(is_loopback_address(address)) << address;
}

}  // namespace
}  // namespace spmvd
