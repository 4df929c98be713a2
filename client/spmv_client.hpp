#pragma once
// The C++ client library of spmvd: one object per connection; every call is a blocking RPC.
// Failures throw RpcError carrying the gRPC status code and the daemon's message.

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/connection.hpp"
#include "core/csr_matrix.hpp"
#include "core/precision.hpp"
#include "proto/grpc/health/v1/health.grpc.pb.h"
#include "proto/spmvd.grpc.pb.h"

namespace spmvd {

class RpcError : public std::runtime_error {
 public:
  RpcError(grpc::StatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  grpc::StatusCode code() const noexcept { return code_; }

 private:
  grpc::StatusCode code_;
};

// "UNAUTHENTICATED", "NOT_FOUND", …: for messages to people.
std::string status_name(grpc::StatusCode code);

struct ClientOptions {
  std::size_t chunk_bytes = std::size_t{1} << 20;  // per Upload message; well under 4 MB
  std::uint64_t max_message_bytes = std::uint64_t{64} << 20;  // replies with many vectors
  ConnectionOptions connection;  // TLS and the Spmv token (plaintext, none by default)
};

class SpmvClient {
 public:
  explicit SpmvClient(const std::string& address, ClientOptions options = {});

  // Streams the CSR arrays in chunks of options.chunk_bytes. expected_multiplies sets the
  // tuning budget (0: the daemon's default; docs/TUNER.md).
  v1::MatrixInfo upload(const CsrMatrix<double>& matrix, Precision precision,
                        const std::string& name = "", bool allow_non_finite = false,
                        std::uint64_t expected_multiplies = 0);
  // Streams the bytes of a .mtx or .mtx.gz file as they are; the daemon parses them.
  v1::MatrixInfo upload_matrix_market(const std::string& file_bytes, Precision precision,
                                      const std::string& name = "",
                                      bool allow_non_finite = false,
                                      std::uint64_t expected_multiplies = 0);
  // Waits for the matrix's tuning (begun at upload) and returns its plan.
  v1::TuneReply tune(const std::string& handle, bool force = false,
                     std::uint64_t expected_multiplies = 0);
  v1::MultiplyReply multiply(const std::string& handle, double alpha, double beta,
                             const std::vector<std::vector<double>>& xs,
                             const std::vector<std::vector<double>>& ys = {});
  void release(const std::string& handle);
  std::vector<v1::MatrixInfo> list();
  // True when grpc.health.v1 answers SERVING.
  bool healthy();

 private:
  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Spmv::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace spmvd
