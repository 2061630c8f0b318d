// denpex::source — the byte-level input seam.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

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

// Reads a file descriptor (not owned unless `owned`). Retries on EINTR;
// once stop handlers are installed (follow.hpp) it waits in slices and ends
// on a stop request, so a pipe with a silent writer cannot hold a --follow.
// For files that never end (/dev/kmsg, /proc/kmsg, /dev/zero), `endless`
// ends the stream once a read has waited `quiet_ms` for data or
// `max_bytes` were read, and cut() says which.
class FdStream final : public ByteStream {
public:
  struct Endless {
    int quiet_ms;
    std::uint64_t max_bytes;
  };
  enum class Cut { none, quiet, size };
  FdStream(int fd, std::string name, bool owned, std::optional<Endless> endless = std::nullopt);
  ~FdStream() override;
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;
  [[nodiscard]] Expected<std::size_t> read(char* buf, std::size_t n) override;
  [[nodiscard]] Cut cut() const noexcept { return m_cut; }

private:
  int m_fd;
  std::string m_name;
  bool m_owned;
  std::optional<Endless> m_endless;
  std::uint64_t m_read = 0;
  Cut m_cut = Cut::none;
};

// Follows a growing file (tail -f): at end of file it waits for more data,
// polling, and reports EOF after `idle_ms` without growth, at once on a stop
// request (follow.hpp), or after `writer_grace_ms` without growth when
// `writer_gone` says no process still writes the file.
class FollowStream final : public ByteStream {
public:
  FollowStream(ByteStream& inner, int idle_ms, std::function<bool()> writer_gone = {}, int poll_ms = 100,
               int writer_grace_ms = 1000)
      : m_inner(inner), m_idle_ms(idle_ms), m_writer_gone(std::move(writer_gone)), m_poll_ms(poll_ms),
        m_writer_grace_ms(writer_grace_ms) {}
  [[nodiscard]] Expected<std::size_t> read(char* buf, std::size_t n) override;

private:
  ByteStream& m_inner;
  int m_idle_ms;
  std::function<bool()> m_writer_gone;
  int m_poll_ms;
  int m_writer_grace_ms;
};

} // namespace denpex::source
