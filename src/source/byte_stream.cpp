#include <denpex/source/byte_stream.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstring>

#include <poll.h>
#include <unistd.h>

#include <denpex/source/follow.hpp>

namespace denpex::source {

Expected<std::size_t> MemoryStream::read(char* buf, std::size_t n) {
  const auto take = std::min(n, m_data.size() - m_pos);
  std::memcpy(buf, m_data.data() + m_pos, take);
  m_pos += take;
  return take;
}

FdStream::FdStream(int fd, std::string name, bool owned, std::optional<Endless> endless)
    : m_fd(fd), m_name(std::move(name)), m_owned(owned), m_endless(endless) {}

FdStream::~FdStream() {
  if (m_owned && m_fd >= 0) {
    ::close(m_fd);
  }
}

Expected<std::size_t> FdStream::read(char* buf, std::size_t n) {
  for (;;) {
    if (m_endless) {
      if (m_read >= m_endless->max_bytes) {
        m_cut = Cut::size;
        return std::size_t{0};
      }
      n = static_cast<std::size_t>(std::min<std::uint64_t>(n, m_endless->max_bytes - m_read));
      pollfd p{m_fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, m_endless->quiet_ms);
      if (ready < 0 && errno == EINTR) {
        if (stop_signal() != 0) {
          return std::size_t{0};
        }
        continue;
      }
      if (ready == 0) {
        m_cut = Cut::quiet;
        return std::size_t{0};
      }
    }
    if (stop_handlers_installed()) {
      pollfd p{m_fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, 200);
      if (stop_signal() != 0) {
        return std::size_t{0};
      }
      if (ready == 0 || (ready < 0 && errno == EINTR)) {
        continue;
      }
    }
    const auto got = ::read(m_fd, buf, n);
    if (got >= 0) {
      m_read += static_cast<std::uint64_t>(got);
      return static_cast<std::size_t>(got);
    }
    if (errno == EINTR) {
      if (stop_signal() != 0) {
        return std::size_t{0};
      }
      continue;
    }
    return make_error(ErrorKind::io, m_name, std::string("read failed: ") + std::strerror(errno));
  }
}

Expected<std::size_t> FollowStream::read(char* buf, std::size_t n) {
  int idle = 0;
  int next_probe = m_writer_grace_ms;
  for (;;) {
    auto got = m_inner.read(buf, n);
    if (!got || *got > 0) {
      return got;
    }
    if (idle >= m_idle_ms || stop_signal() != 0) {
      return std::size_t{0};
    }
    // Asking who writes the file walks /proc: once a grace period, not every poll.
    if (m_writer_gone && idle >= next_probe) {
      if (m_writer_gone()) {
        return std::size_t{0};
      }
      next_probe = idle + m_writer_grace_ms;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(m_poll_ms));
    idle += m_poll_ms;
  }
}

} // namespace denpex::source
