#include "client/spmv_client.hpp"

#include <algorithm>

namespace spmvd {
namespace {

void throw_if_failed(const grpc::Status& status) {
  if (!status.ok()) throw RpcError(status.error_code(), status.error_message());
}

v1::UploadHeader header_for(Precision precision, const std::string& name, bool allow_non_finite,
                            std::uint64_t expected_multiplies) {
  v1::UploadHeader header;
  header.set_precision(precision == Precision::fp32 ? v1::FP32 : v1::FP64);
  header.set_name(name);
  header.set_allow_non_finite(allow_non_finite);
  header.set_expected_multiplies(expected_multiplies);
  return header;
}

// Writes the header, then lets `write_body` stream chunks; the server's reply settles it.
template <typename WriteBody>
v1::MatrixInfo stream_upload(v1::Spmv::Stub& stub, const ConnectionOptions& connection,
                             const v1::UploadHeader& header, WriteBody&& write_body) {
  grpc::ClientContext context;
  authorize(context, connection);
  v1::UploadReply reply;
  auto writer = stub.Upload(&context, &reply);
  v1::UploadChunk first;
  *first.mutable_header() = header;
  // A failed Write means the server already closed the stream: Finish() has its status.
  if (writer->Write(first)) write_body(*writer);
  writer->WritesDone();
  throw_if_failed(writer->Finish());
  return reply.matrix();
}

}  // namespace

std::string status_name(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {
      "OK",      "CANCELLED",          "UNKNOWN",          "INVALID_ARGUMENT",  "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS",   "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE",       "UNIMPLEMENTED",    "INTERNAL",          "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  const auto index = static_cast<std::size_t>(code);
  return index < std::size(kNames) ? kNames[index] : "status " + std::to_string(index);
}

SpmvClient::SpmvClient(const std::string& address, ClientOptions options) : options_(options) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
  arguments.SetMaxSendMessageSize(static_cast<int>(options_.max_message_bytes));
  channel_ = open_channel(address, options_.connection, arguments);
  stub_ = v1::Spmv::NewStub(channel_);
  health_ = grpc::health::v1::Health::NewStub(channel_);
}

v1::MatrixInfo SpmvClient::upload(const CsrMatrix<double>& m, Precision precision,
                                  const std::string& name, bool allow_non_finite,
                                  std::uint64_t expected_multiplies) {
  v1::UploadHeader header = header_for(precision, name, allow_non_finite, expected_multiplies);
  header.set_encoding(v1::UploadHeader::CSR);
  header.set_rows(m.rows);
  header.set_cols(m.cols);
  header.set_nnz(m.nnz());
  const std::size_t offsets_per_chunk = std::max<std::size_t>(1, options_.chunk_bytes / 8);
  const std::size_t entries_per_chunk = std::max<std::size_t>(1, options_.chunk_bytes / 12);
  return stream_upload(*stub_, options_.connection, header, [&](grpc::ClientWriter<v1::UploadChunk>& writer) {
    v1::UploadChunk chunk;
    for (std::size_t i = 0; i < m.row_offsets.size(); i += offsets_per_chunk) {
      const std::size_t end = std::min(m.row_offsets.size(), i + offsets_per_chunk);
      auto* offsets = chunk.mutable_csr()->mutable_row_offsets();
      offsets->Clear();
      offsets->Add(m.row_offsets.begin() + i, m.row_offsets.begin() + end);
      if (!writer.Write(chunk)) return;
    }
    for (std::size_t i = 0; i < m.col_indices.size(); i += entries_per_chunk) {
      const std::size_t end = std::min(m.col_indices.size(), i + entries_per_chunk);
      chunk.Clear();
      auto* csr = chunk.mutable_csr();
      csr->mutable_col_indices()->Add(m.col_indices.begin() + i, m.col_indices.begin() + end);
      csr->mutable_values()->Add(m.values.begin() + i, m.values.begin() + end);
      if (!writer.Write(chunk)) return;
    }
  });
}

v1::MatrixInfo SpmvClient::upload_matrix_market(const std::string& bytes, Precision precision,
                                                const std::string& name, bool allow_non_finite,
                                                std::uint64_t expected_multiplies) {
  v1::UploadHeader header = header_for(precision, name, allow_non_finite, expected_multiplies);
  header.set_encoding(v1::UploadHeader::MATRIX_MARKET);
  return stream_upload(*stub_, options_.connection, header, [&](grpc::ClientWriter<v1::UploadChunk>& writer) {
    v1::UploadChunk chunk;
    for (std::size_t i = 0; i < bytes.size(); i += options_.chunk_bytes) {
      chunk.set_matrix_market(bytes.substr(i, options_.chunk_bytes));
      if (!writer.Write(chunk)) return;
    }
  });
}

v1::TuneReply SpmvClient::tune(const std::string& handle, bool force,
                               std::uint64_t expected_multiplies) {
  grpc::ClientContext context;
  authorize(context, options_.connection);
  v1::TuneRequest request;
  request.set_handle(handle);
  request.set_force(force);
  request.set_expected_multiplies(expected_multiplies);
  v1::TuneReply reply;
  throw_if_failed(stub_->Tune(&context, request, &reply));
  return reply;
}

v1::MultiplyReply SpmvClient::multiply(const std::string& handle, double alpha, double beta,
                                       const std::vector<std::vector<double>>& xs,
                                       const std::vector<std::vector<double>>& ys) {
  grpc::ClientContext context;
  authorize(context, options_.connection);
  v1::MultiplyRequest request;
  request.set_handle(handle);
  request.set_alpha(alpha);
  request.set_beta(beta);
  for (const auto& x : xs) request.add_x()->mutable_values()->Add(x.begin(), x.end());
  for (const auto& y : ys) request.add_y()->mutable_values()->Add(y.begin(), y.end());
  v1::MultiplyReply reply;
  throw_if_failed(stub_->Multiply(&context, request, &reply));
  return reply;
}

void SpmvClient::release(const std::string& handle) {
  grpc::ClientContext context;
  authorize(context, options_.connection);
  v1::ReleaseRequest request;
  request.set_handle(handle);
  v1::ReleaseReply reply;
  throw_if_failed(stub_->Release(&context, request, &reply));
}

std::vector<v1::MatrixInfo> SpmvClient::list() {
  grpc::ClientContext context;
  authorize(context, options_.connection);
  v1::ListMatricesReply reply;
  throw_if_failed(stub_->ListMatrices(&context, {}, &reply));
  return {reply.matrices().begin(), reply.matrices().end()};
}

bool SpmvClient::healthy() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc::health::v1::HealthCheckResponse reply;
  const auto status = health_->Check(&context, {}, &reply);
  return status.ok() && reply.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace spmvd
