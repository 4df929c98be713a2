// BuildSource (kernels/build_source.hpp) on the CPU device, whose memory is host memory: the CSR
// is uploaded once per precision and shared, and a shared layout lives exactly as long as some
// holder does.

#include "kernels/build_source.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/device.hpp"

namespace spmvd {
namespace {

// [1   0   2.5]
// [0   0   0  ]
// [0  1/3  0  ]   (1/3 is not a float: the fp32 copy is rounded)
CsrMatrix<double> three_by_three() {
  return CsrMatrix<double>{3, 3, {0, 2, 2, 3}, {0, 2, 1}, {1.0, 2.5, 1.0 / 3.0}};
}

template <typename T>
std::vector<T> read_back(const DeviceBuffer& buffer) {
  const T* data = buffer.as<const T>();  // CPU device: device memory is host memory
  return std::vector<T>(data, data + buffer.bytes() / sizeof(T));
}

TEST(BuildSource, UploadsTheCsrOncePerPrecision) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  const BuildSource source(m, *device);
  EXPECT_FALSE(source.has_device_csr(Precision::fp64));
  EXPECT_FALSE(source.has_device_csr(Precision::fp32));

  const auto first = source.device_csr(Precision::fp64);
  EXPECT_TRUE(source.has_device_csr(Precision::fp64));
  EXPECT_FALSE(source.has_device_csr(Precision::fp32));
  const auto second = source.device_csr(Precision::fp64);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first->col_indices.data(), second->col_indices.data());

  EXPECT_EQ(first->rows, 3);
  EXPECT_EQ(first->cols, 3);
  EXPECT_EQ(first->nnz, 3);
  EXPECT_EQ(first->precision, Precision::fp64);
  EXPECT_EQ(read_back<RowOffset>(first->row_offsets), m.row_offsets);
  EXPECT_EQ(read_back<ColIndex>(first->col_indices), m.col_indices);
  EXPECT_EQ(read_back<double>(first->values), m.values);
  EXPECT_EQ(first->bytes(), 4U * 8 + 3U * (4 + 8));
}

TEST(BuildSource, ConvertsFp32ValuesOnceInTheirOwnCopy) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  const BuildSource source(m, *device);
  const auto fp32 = source.device_csr(Precision::fp32);
  EXPECT_TRUE(source.has_device_csr(Precision::fp32));
  EXPECT_FALSE(source.has_device_csr(Precision::fp64));
  EXPECT_EQ(fp32, source.device_csr(Precision::fp32));
  EXPECT_EQ(fp32->precision, Precision::fp32);
  EXPECT_EQ(read_back<float>(fp32->values),
            (std::vector<float>{1.0F, 2.5F, static_cast<float>(1.0 / 3.0)}));
  EXPECT_EQ(fp32->bytes(), 4U * 8 + 3U * (4 + 4));

  const auto fp64 = source.device_csr(Precision::fp64);
  EXPECT_NE(fp64->values.data(), fp32->values.data());
  EXPECT_EQ(read_back<double>(fp64->values), m.values);
}

TEST(BuildSource, KeepsTheCsrForItsHoldersAfterTheSourceIsGone) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  std::shared_ptr<const DeviceCsrArrays> held;
  {
    const BuildSource source(m, *device);
    held = source.device_csr(Precision::fp64);
  }
  EXPECT_EQ(held.use_count(), 1);
  EXPECT_EQ(read_back<ColIndex>(held->col_indices), m.col_indices);
}

struct Counted {
  int serial = 0;
};

TEST(BuildSource, SharesALayoutWhileAHolderIsAliveAndRemakesItAfter) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  const BuildSource source(m, *device);
  int made = 0;
  const auto make = [&] { return std::make_shared<const Counted>(Counted{++made}); };

  auto first = source.shared_layout<Counted>("layout", make);
  auto second = source.shared_layout<Counted>("layout", make);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(first, second);
  const auto other_key = source.shared_layout<Counted>("another layout", make);
  EXPECT_EQ(made, 2);
  EXPECT_NE(other_key, first);

  first.reset();  // one holder left: still shared
  EXPECT_EQ(source.shared_layout<Counted>("layout", make), second);
  EXPECT_EQ(made, 2);

  const int old_serial = second->serial;
  second.reset();  // no holder left: the source does not keep it alive
  const auto fresh = source.shared_layout<Counted>("layout", make);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(fresh->serial, 3);
  EXPECT_NE(fresh->serial, old_serial);
  EXPECT_EQ(fresh.use_count(), 1) << "the source holds its layouts only weakly";
}

}  // namespace
}  // namespace spmvd
