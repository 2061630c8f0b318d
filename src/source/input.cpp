#include <denpex/source/input.hpp>
#include <denpex/source/follow.hpp>
#include <denpex/util/strings.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

// A build without libarchive (the WebAssembly core: docs/web.md) reads plain
// text only; its caller decompresses (the page uses the browser's own gzip).
#ifndef DENPEX_NO_ARCHIVES
#include <archive.h>
#include <zlib.h>
#include <archive_entry.h>
#endif
#include <fcntl.h>
#include <fnmatch.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace denpex::source {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_sniff_size = 8192;
constexpr std::size_t k_min_sniff = 512; // magic numbers and the tar header's "ustar" at 257
constexpr int k_max_nesting = 3;

// A stream whose first bytes can be looked at before anyone reads them.
class PeekStream final : public ByteStream {
public:
  explicit PeekStream(ByteStream& inner) : m_inner(inner) {}

  // Reads up to k_sniff_size bytes into the peek buffer (fewer at EOF).
  Expected<std::string_view> peek() {
    while (!m_eof && m_peek.size() < k_min_sniff) {
      const auto old = m_peek.size();
      m_peek.resize(k_sniff_size);
      auto got = m_inner.read(m_peek.data() + old, k_sniff_size - old);
      if (!got) {
        m_peek.resize(old);
        return tl::unexpected<Error>(got.error());
      }
      m_peek.resize(old + *got);
      if (*got == 0) {
        m_eof = true;
      }
    }
    return std::string_view(m_peek);
  }

  Expected<std::size_t> read(char* buf, std::size_t n) override {
    if (m_pos < m_peek.size()) {
      const auto take = std::min(n, m_peek.size() - m_pos);
      std::memcpy(buf, m_peek.data() + m_pos, take);
      m_pos += take;
      return take;
    }
    if (m_eof) {
      return std::size_t{0};
    }
    return m_inner.read(buf, n);
  }

private:
  ByteStream& m_inner;
  std::string m_peek;
  std::size_t m_pos = 0;
  bool m_eof = false;
};

enum class Kind { text, binary, compressed, archive };

bool has_prefix(std::string_view data, std::string_view magic) { return data.substr(0, magic.size()) == magic; }

Kind classify(std::string_view head) {
  using namespace std::string_view_literals;
  if (has_prefix(head, "\x1f\x8b"sv) || has_prefix(head, "\x28\xb5\x2f\xfd"sv) ||
      has_prefix(head, "\xfd" "7zXZ\0"sv) || has_prefix(head, "BZh"sv) || has_prefix(head, "\x04\x22\x4d\x18"sv) ||
      has_prefix(head, "\x5d\x00\x00"sv)) {
    return Kind::compressed;
  }
  if (has_prefix(head, "PK\x03\x04"sv) || has_prefix(head, "PK\x05\x06"sv) ||
      (head.size() >= 262 && head.substr(257, 5) == "ustar")) {
    return Kind::archive;
  }
  const auto probe = head.substr(0, 4096);
  if (probe.find('\0') != std::string_view::npos) {
    return Kind::binary;
  }
  return Kind::text;
}

bool glob_matches(const std::vector<std::string>& globs, std::string_view relative) {
  const std::string path(relative);
  const std::string name = fs::path(path).filename().string();
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return fnmatch(g.c_str(), name.c_str(), 0) == 0 || fnmatch(g.c_str(), path.c_str(), 0) == 0;
  });
}

// What a directory walk skips by default (docs/inputs.md). Given paths are
// always read.
std::optional<std::string> default_skip(const fs::path& p, bool directory) {
  const auto name = p.filename().string();
  if (directory) {
    static const char* const k_dirs[] = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv",
                                         ".tox", ".mypy_cache", ".pytest_cache", "CMakeFiles", ".idea", ".cache"};
    for (const char* d : k_dirs) {
      if (name == d) {
        return std::string("a VCS or build directory");
      }
    }
    return std::nullopt;
  }
  static const char* const k_binary[] = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf", ".so",  ".o",
                                         ".a",   ".pyc", ".pt",   ".pth", ".bin", ".safetensors", ".ckpt",
                                         ".npy", ".npz", ".h5",   ".whl", ".exe", ".db", ".sqlite"};
  static const char* const k_source[] = {".py", ".pyi", ".ipynb", ".c",   ".cc",   ".cpp",  ".cxx", ".h",
                                         ".hh", ".hpp", ".cu",    ".cuh", ".go",   ".rs",   ".java", ".js",
                                         ".ts", ".rb",  ".sh",    ".bash", ".zsh", ".cmake", ".md",  ".rst",
                                         ".toml", ".yaml", ".yml", ".cfg", ".ini", ".html", ".css", ".lock"};
  const auto ext = p.extension().string();
  for (const char* e : k_binary) {
    if (ext == e) {
      return std::string("not a log (binary or model file, by name)");
    }
  }
  for (const char* e : k_source) {
    if (ext == e) {
      return std::string("not a log (source, script or configuration, by name)");
    }
  }
  if (name == "core" || name.rfind("core.", 0) == 0) {
    return std::string("not a log (core dump, by name)");
  }
  if (name == "Makefile" || name == "CMakeLists.txt" || name == "Dockerfile") {
    return std::string("not a log (build file, by name)");
  }
  return std::nullopt;
}

// Remembers what it read (up to a limit) so an archive open that failed can
// be retried from the start with a simpler reader.
} // namespace

std::optional<std::string> walk_skip_reason(std::string_view relative, bool directory, const InputOptions& options) {
  if (glob_matches(options.exclude, relative)) {
    return std::string("excluded by --exclude");
  }
  if (!directory && glob_matches(options.include, relative)) {
    return std::nullopt;
  }
  if (!options.skip_binary_in_dirs) {
    return std::nullopt;
  }
  return default_skip(fs::path(std::string(relative)), directory);
}

std::optional<std::string_view> own_report_format(std::string_view head) {
  if (has_prefix(head, "\xEF\xBB\xBF")) {
    head.remove_prefix(3);
  }
  head = util::trim(head);
  const auto within = [&](std::string_view needle, std::size_t n) {
    return head.substr(0, n).find(needle) != std::string_view::npos;
  };
  if (has_prefix(head, "{")) {
    if (has_prefix(head, "{\"type\":\"")) {
      return std::nullopt; // JSON Lines findings, which a merge reads (findings/findings.hpp)
    }
    if (within("\"$schema\"", 64) && within("sarif", 256) && within("\"denpex\"", 4096)) {
      return "SARIF";
    }
    if (within("\"schema_version\"", 64) && within("\"tool\"", 128) && within("\"denpex\"", 256)) {
      return "JSON";
    }
    return std::nullopt;
  }
  if (has_prefix(head, "<!DOCTYPE html>") && within("<title>denpex: ", 2048)) {
    return "HTML";
  }
  if (has_prefix(head, "## denpex: ") &&
      (within("**Verdict:**", 1024) || within("**Initiating failure:**", 2048) || within("no known failure", 64))) {
    return "Markdown";
  }
  if (has_prefix(head, "# HELP denpex_")) {
    return "Prometheus";
  }
  if (has_prefix(head, "denpex: ") && (within("\nINITIATING FAILURE  [", 2048) || within(" diagnosed (", 512) ||
                                        within("no known failure signature found (", 128))) {
    return "text";
  }
  return std::nullopt;
}

namespace {

// The kernel's pseudo-filesystems: their files are not logs, and some block
// a reader forever (/proc/kmsg). nullptr for any other filesystem.
const char* pseudo_filesystem(const std::string& path) {
  struct statfs sfs {};
  if (::statfs(path.c_str(), &sfs) != 0) {
    return nullptr;
  }
  switch (static_cast<unsigned long>(sfs.f_type)) {
  case 0x9fa0UL: return "procfs";
  case 0x62656572UL: return "sysfs";
  case 0x64626720UL: return "debugfs";
  case 0x74726163UL: return "tracefs";
  case 0x27e0ebUL: return "cgroupfs";
  case 0x63677270UL: return "cgroup2fs";
  default: return nullptr;
  }
}

const char* special_kind(fs::file_type type) {
  switch (type) {
  case fs::file_type::character: return "a character device";
  case fs::file_type::block: return "a block device";
  case fs::file_type::fifo: return "a FIFO";
  case fs::file_type::socket: return "a socket";
  default: return "a special file";
  }
}

class ReplayStream final : public ByteStream {
public:
  explicit ReplayStream(ByteStream& inner, std::size_t limit) : m_inner(inner), m_limit(limit) {}

  Expected<std::size_t> read(char* buf, std::size_t n) override {
    if (m_pos < m_log.size()) {
      const auto take = std::min(n, m_log.size() - m_pos);
      std::memcpy(buf, m_log.data() + m_pos, take);
      m_pos += take;
      return take;
    }
    auto got = m_inner.read(buf, n);
    if (got && m_recording) {
      if (m_log.size() + *got > m_limit) {
        m_recording = false;
        m_log.clear();
        m_log.shrink_to_fit();
        m_pos = 0;
      } else {
        m_log.append(buf, *got);
        m_pos = m_log.size();
      }
    }
    return got;
  }

  // Starts again from the first byte; false if too much was read to replay.
  bool rewind() {
    if (!m_recording) {
      return false;
    }
    m_pos = 0;
    return true;
  }

  void stop_recording() {
    if (m_pos >= m_log.size()) {
      m_recording = false;
      m_log.clear();
      m_log.shrink_to_fit();
      m_pos = 0;
    }
  }

private:
  ByteStream& m_inner;
  std::size_t m_limit;
  std::string m_log;
  std::size_t m_pos = 0;
  bool m_recording = true;
};

#ifndef DENPEX_NO_ARCHIVES
struct ArchiveContext {
  ByteStream* stream;
  std::vector<char> buf = std::vector<char>(1u << 16);
  std::string error;
  std::uint64_t in_bytes = 0; // compressed bytes handed to libarchive
};

// A decompression bomb is stopped, not read to its end: more than this many
// bytes out at more than this ratio to the bytes in (real logs compress
// 5-50:1, a repetitive one a few hundred to one; zeros compress 1000:1).
constexpr std::uint64_t k_bomb_min_bytes = 256ull << 20;
constexpr std::uint64_t k_bomb_ratio = 1000;

la_ssize_t archive_read_cb(struct archive*, void* client, const void** out) {
  auto* ctx = static_cast<ArchiveContext*>(client);
  auto got = ctx->stream->read(ctx->buf.data(), ctx->buf.size());
  if (!got) {
    ctx->error = got.error().what;
    return -1;
  }
  *out = ctx->buf.data();
  ctx->in_bytes += *got;
  return static_cast<la_ssize_t>(*got);
}

class ArchiveEntryStream final : public ByteStream {
public:
  ArchiveEntryStream(struct archive* a, std::string name, const ArchiveContext& ctx)
      : m_archive(a), m_name(std::move(name)), m_ctx(ctx) {}
  Expected<std::size_t> read(char* buf, std::size_t n) override {
    const auto got = archive_read_data(m_archive, buf, n);
    if (got < 0) {
      const char* msg = archive_error_string(m_archive);
      return make_error(ErrorKind::format, m_name,
                        std::string("damaged compressed data: ") + (msg ? msg : "unknown libarchive error"));
    }
    m_out += static_cast<std::uint64_t>(got);
    if (m_out > k_bomb_min_bytes && m_out > k_bomb_ratio * std::max<std::uint64_t>(m_ctx.in_bytes, 1)) {
      return make_error(ErrorKind::format, m_name,
                        "stopped after " + std::to_string(m_out >> 20) + " MiB decompressed from " +
                            std::to_string(m_ctx.in_bytes >> 10) + " KiB: more than " + std::to_string(k_bomb_ratio) +
                            ":1 looks like a decompression bomb; what was read before is diagnosed");
    }
    return static_cast<std::size_t>(got);
  }

private:
  struct archive* m_archive;
  std::string m_name;
  const ArchiveContext& m_ctx;
  std::uint64_t m_out = 0;
};

#endif

class Walker {
public:
  Walker(const InputOptions& options, Diagnostics& diags) : m_options(options), m_diags(diags) {}

  // Visits the sources in `stream` (named `name`); recursion through nested
  // compressed members is bounded by k_max_nesting.
  bool visit_stream(ByteStream& raw, SourceInfo info, bool from_walk, int depth, const SourceVisitor& visit) {
    PeekStream stream(raw);
    auto head = stream.peek();
    if (!head) {
      m_diags.error(head.error());
      return true;
    }
    const Kind kind = classify(*head);
    if (kind == Kind::binary && from_walk && m_options.skip_binary_in_dirs) {
      spdlog::info("{}: skipped: looks binary (NUL bytes in the first 4 KiB)", util::escape_for_terminal(info.name));
      return true;
    }
    if (kind == Kind::text) {
      // The epilogue's denpex.json in the directory it diagnoses: a report
      // quotes log lines, and reading it back would diagnose them twice.
      if (auto format = own_report_format(*head)) {
        const auto what = fmt::format("denpex's own {} report, not a log", *format);
        if (from_walk) {
          spdlog::info("{}: skipped: {}", util::escape_for_terminal(info.name), what);
        } else {
          m_diags.error(Error{ErrorKind::format, info.name, what + ": not read"});
        }
        return true;
      }
    }
    if ((kind == Kind::compressed || kind == Kind::archive) && depth < k_max_nesting) {
#ifdef DENPEX_NO_ARCHIVES
      m_diags.error(Error{ErrorKind::format, info.name,
                          "compressed or archived: this build reads text only; decompress it first"});
      return true;
#else
      return visit_archive(stream, info, kind == Kind::compressed, depth, visit);
#endif
    }
    return visit(info, stream);
  }

private:
#ifndef DENPEX_NO_ARCHIVES
  // Every format archive_read_support_format_all() reads except XAR, whose
  // XML reader (libxml2, and with it ICU) would be loaded by every run of a
  // statically linked binary for a format no log comes in.
  static void support_archive_formats(struct archive* a) {
    archive_read_support_format_7zip(a);
    archive_read_support_format_ar(a);
    archive_read_support_format_cab(a);
    archive_read_support_format_cpio(a);
    archive_read_support_format_empty(a);
    archive_read_support_format_iso9660(a);
    archive_read_support_format_lha(a);
    archive_read_support_format_mtree(a);
    archive_read_support_format_rar(a);
    archive_read_support_format_rar5(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_warc(a);
    archive_read_support_format_zip(a);
  }

  // Opens `stream` as an archive (every format but XAR) or, with raw_only, as one
  // compressed stream. Returns the archive and its first header result.
  static struct archive* open_archive(ArchiveContext& ctx, bool raw_only, struct archive_entry** entry, int* first) {
    struct archive* a = archive_read_new();
    archive_read_support_filter_all(a);
    if (!raw_only) {
      support_archive_formats(a);
    }
    archive_read_support_format_raw(a);
    if (archive_read_open(a, &ctx, nullptr, archive_read_cb, nullptr) != ARCHIVE_OK) {
      *first = ARCHIVE_FATAL;
      return a;
    }
    *first = archive_read_next_header(a, entry);
    return a;
  }

  bool visit_archive(ByteStream& raw_stream, const SourceInfo& outer, bool compressed, int depth,
                     const SourceVisitor& visit) {
    ReplayStream stream(raw_stream, 4u << 20);
    ArchiveContext ctx{&stream};
    struct archive_entry* entry = nullptr;
    int r = ARCHIVE_OK;
    // A compressed stream is a log unless what it decompresses to starts
    // like an archive: libarchive's own probing would take a log that
    // starts with zero blocks (a crash-truncated one) for an empty tar.
    bool as_archive = !compressed;
    struct archive* a = nullptr;
    if (compressed) {
      a = open_archive(ctx, true, &entry, &r);
      if (r >= ARCHIVE_WARN) {
        ArchiveEntryStream probe(a, outer.name, ctx);
        PeekStream peek(probe);
        auto head = peek.peek();
        if (!head) {
          // The first block does not decompress: read what zlib can.
          archive_read_free(a);
          if (is_gzip(stream) && stream.rewind()) {
            return visit_truncated_gzip(stream, outer, visit);
          }
          m_diags.error(head.error());
          return true;
        }
        if (classify(*head) == Kind::archive) {
          as_archive = true;
        } else {
          stream.stop_recording();
          SourceInfo info = outer;
          const bool keep_going = visit_stream(peek, info, false, depth + 1, visit);
          archive_read_free(a);
          return keep_going;
        }
      }
      if (as_archive || r < ARCHIVE_WARN) {
        archive_read_free(a);
        a = nullptr;
        if (!stream.rewind()) {
          m_diags.error(Error{ErrorKind::format, outer.name, "cannot reopen the compressed archive"});
          return true;
        }
        ctx.error.clear();
        ctx.in_bytes = 0;
      }
    }
    if (a == nullptr) {
      a = open_archive(ctx, !as_archive, &entry, &r);
    }
    // A crash-truncated .gz can fail while libarchive probes formats (it
    // reads ahead); retry it as a single compressed stream so that what is
    // readable is still read.
    if (r < ARCHIVE_WARN && stream.rewind()) {
      archive_read_free(a);
      ctx.error.clear();
      a = open_archive(ctx, true, &entry, &r);
    }
    if (r < ARCHIVE_WARN && r != ARCHIVE_EOF && is_gzip(stream) && stream.rewind()) {
      // libarchive fails to open a gzip whose damage lies inside its first
      // 64 KiB output block; zlib can still return the bytes before it.
      archive_read_free(a);
      return visit_truncated_gzip(stream, outer, visit);
    }
    stream.stop_recording();
    if (r < ARCHIVE_WARN && r != ARCHIVE_EOF) {
      m_diags.error(Error{ErrorKind::format, outer.name, std::string("cannot open archive: ") + error_of(a, ctx)});
      archive_read_free(a);
      return true;
    }
    const bool keep_going = visit_members(a, entry, r, ctx, outer, depth, visit);
    archive_read_free(a);
    return keep_going;
  }

  // Each regular member of an opened archive, from the header already read
  // (`entry`, `r`), as its own source "archive:member"; a raw stream (one
  // compressed file) keeps the outer name. False if the visitor stopped.
  bool visit_members(struct archive* a, struct archive_entry* entry, int r, ArchiveContext& ctx,
                     const SourceInfo& outer, int depth, const SourceVisitor& visit) {
    for (bool first_entry = true;; first_entry = false) {
      if (!first_entry) {
        r = archive_read_next_header(a, &entry);
      }
      if (r == ARCHIVE_EOF) {
        return true;
      }
      if (r < ARCHIVE_WARN) {
        m_diags.error(Error{ErrorKind::format, outer.name, std::string("damaged archive: ") + error_of(a, ctx)});
        return true;
      }
      if (archive_entry_filetype(entry) != AE_IFREG) {
        continue;
      }
      const bool raw = archive_format(a) == ARCHIVE_FORMAT_RAW;
      SourceInfo info = outer;
      if (!raw) {
        const char* member = archive_entry_pathname(entry);
        info.name = outer.name + ":" + (member ? member : "?");
        if (archive_entry_mtime_is_set(entry)) {
          info.mtime = archive_entry_mtime(entry);
        }
      }
      ArchiveEntryStream entry_stream(a, info.name, ctx);
      if (!visit_stream(entry_stream, info, !raw, depth + 1, visit)) {
        return false;
      }
      if (raw) {
        return true;
      }
    }
  }

  static bool is_gzip(ReplayStream& stream) {
    if (!stream.rewind()) {
      return false;
    }
    char magic[2] = {0, 0};
    auto got = stream.read(magic, 2);
    return got && *got == 2 && magic[0] == '\x1f' && magic[1] == '\x8b';
  }

  bool visit_truncated_gzip(ReplayStream& stream, const SourceInfo& info, const SourceVisitor& visit) {
    std::string in;
    std::vector<char> buf(1u << 16);
    for (;;) {
      auto got = stream.read(buf.data(), buf.size());
      if (!got || *got == 0) {
        break;
      }
      in.append(buf.data(), *got);
    }
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) {
      m_diags.error(Error{ErrorKind::format, info.name, "damaged compressed data: cannot initialise zlib"});
      return true;
    }
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(in.data());
    z.avail_in = static_cast<uInt>(in.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
      z.next_out = reinterpret_cast<Bytef*>(buf.data());
      z.avail_out = static_cast<uInt>(buf.size());
      rc = inflate(&z, Z_SYNC_FLUSH);
      out.append(buf.data(), buf.size() - z.avail_out);
      if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
        rc = Z_BUF_ERROR; // input ended before the stream did
      }
    }
    inflateEnd(&z);
    MemoryStream partial(out);
    SourceInfo si = info;
    const bool keep_going = visit(si, partial);
    if (rc != Z_STREAM_END) {
      m_diags.error(Error{ErrorKind::format, info.name,
                          "damaged compressed data: truncated gzip input (the " + std::to_string(out.size()) +
                              " bytes before the damage were read)"});
    }
    return keep_going;
  }

  static std::string error_of(struct archive* a, const ArchiveContext& ctx) {
    if (!ctx.error.empty()) {
      return ctx.error;
    }
    const char* msg = archive_error_string(a);
    return msg ? msg : "unrecognised format";
  }

#endif // DENPEX_NO_ARCHIVES

  const InputOptions& m_options;
  Diagnostics& m_diags;
};

class FilesystemOpener final : public InputOpener {
public:
  explicit FilesystemOpener(InputOptions options) : m_options(options) {}

  std::vector<InputUnit> expand(const std::vector<std::string>& paths, Diagnostics& diags) override {
    std::vector<InputUnit> units;
    for (const auto& path : paths) {
      if (path == "-") {
        units.push_back({"-", "<stdin>"});
        continue;
      }
      std::error_code ec;
      const auto st = fs::status(path, ec);
      if (ec || !fs::exists(st)) {
        diags.error(Error{ErrorKind::io, path, ec ? ec.message() : "No such file or directory"});
        continue;
      }
      if (fs::is_directory(st)) {
        walk(path, units, diags);
      } else {
        units.push_back({path, path});
      }
    }
    return units;
  }

  void read(const InputUnit& unit, Diagnostics& diags, const SourceVisitor& visit) override {
    Walker walker(m_options, diags);
    SourceInfo info;
    info.name = unit.display;
    info.path = unit.path;
    if (unit.path == "-") {
      FdStream in(STDIN_FILENO, "<stdin>", false);
      walker.visit_stream(in, info, false, 0, visit);
      return;
    }
    const int fd = ::open(unit.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      diags.error(Error{ErrorKind::io, unit.display, std::strerror(errno)});
      return;
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
      info.mtime = st.st_mtime;
      if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        diags.error(Error{ErrorKind::io, unit.display, "is a directory"});
        return;
      }
    }
    // A device or a kernel file (/dev/kmsg, /proc/kmsg, /dev/zero) never
    // ends: read it until it has been quiet a while or a bound is reached,
    // unless following it.
    std::optional<FdStream::Endless> endless;
    if ((S_ISCHR(st.st_mode) || pseudo_filesystem(unit.path) != nullptr) && m_options.follow_idle_ms <= 0) {
      endless = FdStream::Endless{k_endless_quiet_ms, k_endless_max_bytes};
    }
    FdStream in(fd, unit.display, true, endless);
    if (m_options.follow_idle_ms > 0 && S_ISREG(st.st_mode)) {
      // A writer that closed the file will not write again: no need to wait
      // out the idle time (where the OS can tell who has it open).
      FollowStream follow(in, m_options.follow_idle_ms, [st] { return open_for_writing(st) == false; });
      walker.visit_stream(follow, info, unit.from_walk, 0, visit);
      return;
    }
    walker.visit_stream(in, info, unit.from_walk, 0, visit);
    if (in.cut() != FdStream::Cut::none) {
      diags.warning(Error{ErrorKind::io, unit.display,
                          in.cut() == FdStream::Cut::quiet
                              ? fmt::format("read until it was quiet for {} s: it does not end (--follow keeps reading)",
                                            k_endless_quiet_ms / 1000)
                              : fmt::format("read the first {} MiB: a device that does not end",
                                            k_endless_max_bytes >> 20)});
    }
  }

private:
  static constexpr int k_endless_quiet_ms = 2000;
  static constexpr std::uint64_t k_endless_max_bytes = std::uint64_t{256} << 20;

  // Depth-first, one directory at a time, so that a directory that cannot
  // be listed is one named error and the walk goes on with its siblings
  // (recursive_directory_iterator ends the whole walk at the first one).
  // Symbolic links to directories are not followed; links to files are.
  void walk(const std::string& root, std::vector<InputUnit>& units, Diagnostics& diags) {
    if (const char* kind = pseudo_filesystem(root)) {
      spdlog::warn("{}: skipped: {} files are the kernel's, not logs (name one file to read it)",
                   util::escape_for_terminal(root), kind);
      return;
    }
    std::vector<std::string> found;
    std::vector<fs::path> pending{fs::path(root)};
    while (!pending.empty()) {
      const fs::path dir = std::move(pending.back());
      pending.pop_back();
      std::error_code ec;
      fs::directory_iterator it(dir, ec);
      for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        visit_entry(root, *it, pending, found);
      }
      if (ec) {
        diags.error(Error{ErrorKind::io, dir.string(), "cannot list directory: " + ec.message()});
      }
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found) {
      units.push_back({f, f, true});
    }
  }

  void visit_entry(const std::string& root, const fs::directory_entry& entry, std::vector<fs::path>& pending,
                   std::vector<std::string>& found) {
    const auto name = [&] { return util::escape_for_terminal(entry.path().string()); };
    std::error_code ec;
    const auto st = entry.status(ec);
    if (ec) {
      spdlog::info("{}: skipped: {}", name(), ec.message()); // a dangling link
      return;
    }
    const bool directory = fs::is_directory(st);
    if (directory && entry.is_symlink(ec)) {
      spdlog::info("{}: skipped: a link to a directory (name it to read it)", name());
      return;
    }
    if (!directory && !fs::is_regular_file(st)) {
      // Devices, FIFOs and sockets can block a walk forever (/dev/kmsg, a
      // FIFO nobody writes); name one to read it.
      spdlog::info("{}: skipped: not a regular file ({})", name(), special_kind(st.type()));
      return;
    }
    const auto relative = entry.path().lexically_relative(root).generic_string();
    if (auto why = walk_skip_reason(relative, directory, m_options)) {
      spdlog::info("{}: skipped: {}", name(), *why);
      return;
    }
    if (directory) {
      if (const char* kind = pseudo_filesystem(entry.path().string())) {
        spdlog::info("{}: skipped: {} (the kernel's files, not logs)", name(), kind);
        return;
      }
      pending.push_back(entry.path());
      return;
    }
    found.push_back(entry.path().string());
  }

  InputOptions m_options;
};

class MemoryOpener final : public InputOpener {
public:
  explicit MemoryOpener(std::vector<MemoryFile> files) : m_files(std::move(files)) {}

  std::vector<InputUnit> expand(const std::vector<std::string>& paths, Diagnostics& diags) override {
    std::vector<InputUnit> units;
    for (const auto& p : paths) {
      const bool known = std::any_of(m_files.begin(), m_files.end(), [&](const auto& f) { return f.name == p; });
      if (!known) {
        diags.error(Error{ErrorKind::io, p, "No such file or directory"});
        continue;
      }
      units.push_back({p, p});
    }
    return units;
  }

  void read(const InputUnit& unit, Diagnostics& diags, const SourceVisitor& visit) override {
    for (const auto& f : m_files) {
      if (f.name == unit.path) {
        Walker walker(m_options, diags);
        MemoryStream in(f.content);
        SourceInfo info;
        info.name = f.name;
        info.path = f.name;
        info.mtime = f.mtime;
        walker.visit_stream(in, info, false, 0, visit);
        return;
      }
    }
  }

private:
  std::vector<MemoryFile> m_files;
  InputOptions m_options;
};

} // namespace

std::unique_ptr<InputOpener> make_filesystem_opener(InputOptions options) {
  return std::make_unique<FilesystemOpener>(options);
}

std::unique_ptr<InputOpener> make_document_opener(std::vector<MemoryFile> files) {
  return std::make_unique<MemoryOpener>(std::move(files));
}

std::unique_ptr<InputOpener> make_memory_opener(std::vector<std::pair<std::string, std::string>> files) {
  std::vector<MemoryFile> named;
  named.reserve(files.size());
  for (auto& [name, content] : files) {
    named.push_back(MemoryFile{std::move(name), std::move(content), std::nullopt});
  }
  return make_document_opener(std::move(named));
}

} // namespace denpex::source
