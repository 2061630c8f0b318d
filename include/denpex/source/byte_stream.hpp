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

// Follows a growing file (tail -f): at end of file it waits for more data,
// polling, and reports EOF only after `idle_ms` without growth.
class FollowStream final : public ByteStream {
public:
  FollowStream(ByteStream& inner, int idle_ms, int poll_ms = 100)
      : m_inner(inner), m_idle_ms(idle_ms), m_poll_ms(poll_ms) {}
  [[nodiscard]] Expected<std::size_t> read(char* buf, std::size_t n) override;

private:
  ByteStream& m_inner;
  int m_idle_ms;
  int m_poll_ms;
};

} // namespace denpex::source
