#include <denpex/source/byte_stream.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace denpex::source {

Expected<std::size_t> MemoryStream::read(char* buf, std::size_t n) {
  const auto take = std::min(n, m_data.size() - m_pos);
  std::memcpy(buf, m_data.data() + m_pos, take);
  m_pos += take;
  return take;
}

FdStream::FdStream(int fd, std::string name, bool owned) : m_fd(fd), m_name(std::move(name)), m_owned(owned) {}

FdStream::~FdStream() {
  if (m_owned && m_fd >= 0) {
    ::close(m_fd);
  }
}

Expected<std::size_t> FdStream::read(char* buf, std::size_t n) {
  for (;;) {
    const auto got = ::read(m_fd, buf, n);
    if (got >= 0) {
      return static_cast<std::size_t>(got);
    }
    if (errno == EINTR) {
      continue;
    }
    return make_error(ErrorKind::io, m_name, std::string("read failed: ") + std::strerror(errno));
  }
}

Expected<std::size_t> FollowStream::read(char* buf, std::size_t n) {
  int idle = 0;
  for (;;) {
    auto got = m_inner.read(buf, n);
    if (!got || *got > 0) {
      return got;
    }
    if (idle >= m_idle_ms) {
      return std::size_t{0};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(m_poll_ms));
    idle += m_poll_ms;
  }
}

} // namespace denpex::source
