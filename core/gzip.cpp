#include "core/gzip.hpp"

#include <zlib.h>

#include "core/error.hpp"

namespace spmvd {

bool looks_gzipped(std::string_view bytes) noexcept {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(std::string_view compressed, std::size_t max_output_bytes) {
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (not raw deflate or zlib).
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
    throw Error(ErrorCode::internal, "zlib inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());

  std::string out;
  constexpr std::size_t kChunk = 1 << 20;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    const std::size_t old_size = out.size();
    if (old_size > max_output_bytes) {
      inflateEnd(&stream);
      throw Error(ErrorCode::resource_exhausted,
                  "gzip data inflates past the limit of " + std::to_string(max_output_bytes) +
                      " bytes");
    }
    out.resize(old_size + kChunk);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + old_size);
    stream.avail_out = static_cast<uInt>(kChunk);
    status = inflate(&stream, Z_NO_FLUSH);
    out.resize(old_size + kChunk - stream.avail_out);
    if (status == Z_STREAM_END) break;
    if (status != Z_OK) {
      const std::string reason = stream.msg ? stream.msg : "corrupt data";
      const auto offset = stream.total_in;
      inflateEnd(&stream);
      throw Error(ErrorCode::invalid_argument,
                  "gzip stream corrupt at compressed byte " + std::to_string(offset) + ": " + reason);
    }
    if (stream.avail_in == 0 && stream.avail_out != 0) {
      const auto offset = stream.total_in;
      inflateEnd(&stream);
      throw Error(ErrorCode::invalid_argument,
                  "gzip stream truncated after " + std::to_string(offset) + " compressed bytes");
    }
  }
  inflateEnd(&stream);
  if (out.size() > max_output_bytes)
    throw Error(ErrorCode::resource_exhausted,
                "gzip data inflates past the limit of " + std::to_string(max_output_bytes) + " bytes");
  return out;
}

}  // namespace spmvd
