// denpex::source — the byte-level input seam.
#pragma once

#include <cstddef>
#include <memory>

#include <denpex/util/expected.hpp>

namespace denpex::source {

// A readable stream of bytes. read() returns the number of bytes stored in
// `buf` (at most `n`), 0 at end of input, or an error. After an error or EOF
// the stream is not read again.
class ByteStream {
public:
  virtual ~ByteStream() = default;
  [[nodiscard]] virtual Expected<std::size_t> read(char* buf, std::size_t n) = 0;
};

// Reads a whole in-memory string (tests, fuzzing).
class MemoryStream final : public ByteStream {
public:
  explicit MemoryStream(std::string_view data) : m_data(data) {}
  [[nodiscard]] Expected<std::size_t> read(char* buf, std::size_t n) override;

private:
  std::string_view m_data;
  std::size_t m_pos = 0;
};

// Reads a file descriptor (not owned unless `owned`). Retries on EINTR.
class FdStream final : public ByteStream {
public:
  FdStream(int fd, std::string name, bool owned);
  ~FdStream() override;
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;
  [[nodiscard]] Expected<std::size_t> read(char* buf, std::size_t n) override;

private:
  int m_fd;
  std::string m_name;
  bool m_owned;
};

} // namespace denpex::source
