// Stop requests and writer detection for followed inputs (follow.hpp).
#include <denpex/source/follow.hpp>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace denpex::source {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
std::atomic<bool> g_installed{false};

extern "C" void on_stop_signal(int signo) {
  if (g_stop_signal != 0) {
    // The second interrupt: the user means it.
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  g_stop_signal = signo;
}

bool all_digits(const char* s) {
  for (; *s != '\0'; ++s) {
    if (std::isdigit(static_cast<unsigned char>(*s)) == 0) {
      return false;
    }
  }
  return true;
}

// The access mode of /proc/PID/fdinfo/FD ("flags:\t0100002"), or -1.
int access_mode(const std::string& fdinfo) {
  std::FILE* f = std::fopen(fdinfo.c_str(), "re");
  if (f == nullptr) {
    return -1;
  }
  char line[128];
  int mode = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "flags:", 6) == 0) {
      mode = static_cast<int>(std::strtol(line + 6, nullptr, 8) & O_ACCMODE);
      break;
    }
  }
  std::fclose(f);
  return mode;
}

} // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; // no SA_RESTART: a blocked read returns EINTR
  // Every signal a terminal or a scheduler sends to end a job: a closed
  // terminal (HUP), Ctrl-C, kill, Slurm's and LSF's warnings before the
  // time limit (USR1/USR2, XCPU). Each ends the following with the report.
  for (const int signo : {SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU}) {
    sigaction(signo, &sa, nullptr);
  }
  g_installed = true;
}

int stop_signal() noexcept { return g_stop_signal; }

bool stop_handlers_installed() noexcept { return g_installed; }

std::optional<bool> open_for_writing(const struct stat& file) {
#ifdef __linux__
  const bool shared = (file.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  // Whether a process whose descriptors are hidden from us could write it.
  auto could_write = [&](const char* pid) {
    struct stat ps {};
    if (::stat((std::string("/proc/") + pid).c_str(), &ps) != 0) {
      return false;
    }
    return shared || ps.st_uid == file.st_uid;
  };
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) {
    return std::nullopt;
  }
  bool unknown = false;
  bool writer = false;
  while (dirent* p = ::readdir(proc)) {
    if (!all_digits(p->d_name)) {
      continue;
    }
    const std::string fd_dir = std::string("/proc/") + p->d_name + "/fd";
    DIR* fds = ::opendir(fd_dir.c_str());
    if (fds == nullptr) {
      const bool hidden = errno == EACCES || errno == EPERM; // ENOENT: it exited
      unknown = unknown || (hidden && could_write(p->d_name));
      continue;
    }
    while (dirent* f = ::readdir(fds)) {
      if (!all_digits(f->d_name)) {
        continue;
      }
      struct stat st {};
      if (::stat((fd_dir + "/" + f->d_name).c_str(), &st) != 0 || st.st_dev != file.st_dev || st.st_ino != file.st_ino) {
        continue;
      }
      const int mode = access_mode(std::string("/proc/") + p->d_name + "/fdinfo/" + f->d_name);
      if (mode == O_WRONLY || mode == O_RDWR) {
        writer = true;
        break;
      }
      unknown = unknown || mode < 0;
    }
    ::closedir(fds);
    if (writer) {
      break;
    }
  }
  ::closedir(proc);
  if (writer) {
    return true;
  }
  return unknown ? std::nullopt : std::optional<bool>(false);
#else
  (void)file;
  return std::nullopt;
#endif
}

} // namespace denpex::source
