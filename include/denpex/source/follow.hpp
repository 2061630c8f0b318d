// denpex::source — ending a followed input: a stop request (SIGINT or
// SIGTERM while following) and whether anyone still writes the file.
#pragma once

#include <optional>

#include <sys/stat.h>

namespace denpex::source {

// Installs SIGINT and SIGTERM handlers that request a stop instead of
// killing the process: streams that wait for input (FollowStream, FdStream on
// a pipe) then end as if at end of input, so what was read is diagnosed. A
// second signal of either kind kills the process as usual.
void install_stop_handlers();
// The signal that requested a stop, 0 when none did.
int stop_signal() noexcept;
// Whether install_stop_handlers() ran: waits must then wake up to check.
bool stop_handlers_installed() noexcept;

// Whether any process has the file `st` describes open for writing: true,
// false, or nullopt when the OS cannot tell (no /proc, or the descriptors of
// a process that could write it are not readable to this one). A process of
// another user is taken to be able to write the file only if the file is
// group- or world-writable, or both are root's. Linux only; nullopt
// elsewhere.
std::optional<bool> open_for_writing(const struct stat& st);

} // namespace denpex::source
