// The built-in catalog's binary form (serialize.hpp). Fields are written in
// declaration order, except the details (write_details), which come as one
// block so that a reader can step past them and come back; a new field in
// Signature needs a line in both directions and a new k_version.
#include <denpex/catalog/serialize.hpp>

#include <cstdint>

namespace denpex::catalog {

namespace {

constexpr std::string_view k_magic = "denpex-catalog\n";
constexpr std::uint32_t k_version = 8;

class Writer {
public:
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
  }
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out.append(s);
  }
  void strs(const std::vector<std::string>& v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (const auto& s : v) {
      str(s);
    }
  }
  void pairs(const std::vector<std::pair<std::string, std::string>>& v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (const auto& [a, b] : v) {
      str(a);
      str(b);
    }
  }
  // A length-prefixed block, so that a reader can step over it in one jump
  // without touching its pages.
  template <typename Body> void block(Body&& body) {
    const auto at = out.size();
    u32(0);
    body();
    const auto n = static_cast<std::uint32_t>(out.size() - at - 4);
    for (int i = 0; i < 4; ++i) {
      out[at + static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    }
  }
  std::string out;
};

// Reads what Writer wrote; any read past the end or an impossible count
// marks the blob bad and returns empty values from then on.
class Reader {
public:
  explicit Reader(std::string_view in) : m_in(in) {}

  std::uint32_t u32() {
    if (m_in.size() < 4) {
      m_bad = true;
      return 0;
    }
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= static_cast<std::uint32_t>(static_cast<unsigned char>(m_in[static_cast<std::size_t>(i)])) << (8 * i);
    }
    m_in.remove_prefix(4);
    return v;
  }
  std::string str() {
    const auto n = u32();
    if (n > m_in.size()) {
      m_bad = true;
      return {};
    }
    std::string s(m_in.substr(0, n));
    m_in.remove_prefix(n);
    return s;
  }
  // A count of items each at least 4 bytes long: never more than remain.
  std::uint32_t count() {
    const auto n = u32();
    if (n > m_in.size() / 4) {
      m_bad = true;
      return 0;
    }
    return n;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(count());
    for (auto& s : v) {
      s = str();
    }
    return v;
  }
  std::vector<std::pair<std::string, std::string>> pairs() {
    std::vector<std::pair<std::string, std::string>> v(count());
    for (auto& [a, b] : v) {
      a = str();
      b = str();
    }
    return v;
  }
  // The next block's bytes (Writer::block), stepped over.
  std::string_view block() {
    const auto n = u32();
    if (n > m_in.size()) {
      m_bad = true;
      return {};
    }
    const auto b = m_in.substr(0, n);
    m_in.remove_prefix(n);
    return b;
  }
  [[nodiscard]] bool bad() const { return m_bad; }
  void set_bad() { m_bad = true; } // read, but not what the writer wrote
  // Where the next read starts, as an offset into `whole` (which m_in is a suffix of).
  [[nodiscard]] std::size_t offset_in(std::string_view whole) const {
    return static_cast<std::size_t>(m_in.data() - whole.data());
  }
  [[nodiscard]] bool done() const { return m_in.empty(); }

private:
  std::string_view m_in;
  bool m_bad = false;
};

void write_signal(Writer& w, const Signal& s) {
  w.str(s.id);
  w.str(s.pattern);
  w.str(s.description);
  w.str(s.if_missing);
  w.u32(s.anchor ? 1 : 0);
  w.u32(s.presence ? 1 : 0);
  w.u32(static_cast<std::uint32_t>(s.lookback));
  w.str(s.when ? s.when->text() : std::string());
}

Signal read_signal(Reader& r) {
  Signal s;
  s.id = r.str();
  s.pattern = r.str();
  s.description = r.str();
  s.if_missing = r.str();
  s.anchor = r.u32() != 0;
  s.presence = r.u32() != 0;
  const auto lookback = r.u32();
  s.lookback = lookback <= static_cast<std::uint32_t>(Signal::Lookback::cxx_terminate)
                   ? static_cast<Signal::Lookback>(lookback)
                   : Signal::Lookback::none;
  if (const auto when = r.str(); !when.empty()) {
    if (auto c = Condition::parse(when)) {
      s.when = std::move(*c);
    } else {
      r.set_bad(); // the build's loader parsed it: a damaged blob
    }
  }
  return s;
}

void write_examples(Writer& w, const Signature& sig) {
  w.u32(static_cast<std::uint32_t>(sig.match_examples.size()));
  for (const auto& ex : sig.match_examples) {
    w.str(ex.line);
    w.str(ex.signal);
    w.pairs({ex.captures.begin(), ex.captures.end()});
    w.pairs({ex.context.begin(), ex.context.end()});
    w.str(ex.origin);
  }
  w.strs(sig.no_match_examples);
}

// The examples, or (`keep` false: diagnose and grep never show them) a
// jump past them.
void read_examples(Reader& outer, Signature& sig, bool keep) {
  const auto bytes = outer.block();
  if (!keep) {
    return;
  }
  Reader r(bytes);
  sig.match_examples.resize(r.count());
  for (auto& ex : sig.match_examples) {
    ex.line = r.str();
    ex.signal = r.str();
    for (auto& [k, v] : r.pairs()) {
      ex.captures.emplace(std::move(k), std::move(v));
    }
    for (auto& [k, v] : r.pairs()) {
      ex.context.emplace(std::move(k), std::move(v));
    }
    ex.origin = r.str();
  }
  sig.no_match_examples = r.strs();
  if (r.bad() || !r.done()) {
    outer.set_bad();
  }
}

// The prose only a report shows (LoadOptions::details_on_demand).
void write_details(Writer& w, const Signature& sig) {
  w.str(sig.root_cause);
  w.str(sig.fix.summary);
  w.pairs(sig.fix.env);
  w.strs(sig.fix.steps);
  w.strs(sig.fix.commands);
  w.pairs(sig.fix.stacks);
  w.str(sig.verify.summary);
  w.strs(sig.verify.commands);
  w.str(sig.prevention);
  w.str(sig.affected);
  std::vector<std::pair<std::string, std::string>> refs;
  for (const auto& ref : sig.references) {
    refs.emplace_back(ref.title, ref.url);
  }
  w.pairs(refs);
}

void read_details(Reader& r, Signature& sig) {
  sig.root_cause = r.str();
  sig.fix.summary = r.str();
  sig.fix.env = r.pairs();
  sig.fix.steps = r.strs();
  sig.fix.commands = r.strs();
  sig.fix.stacks = r.pairs();
  sig.verify.summary = r.str();
  sig.verify.commands = r.strs();
  sig.prevention = r.str();
  sig.affected = r.str();
  auto refs = r.pairs();
  sig.references.reserve(refs.size());
  for (auto& [title, url] : refs) {
    sig.references.push_back({std::move(title), std::move(url)});
  }
}

void write_signature(Writer& w, const Signature& sig) {
  w.str(sig.id);
  w.str(sig.title);
  w.str(sig.area);
  w.u32(static_cast<std::uint32_t>(sig.role));
  w.u32(static_cast<std::uint32_t>(sig.severity));
  w.u32(static_cast<std::uint32_t>(sig.priority));
  w.u32(sig.generic ? 1 : 0);
  w.u32(sig.joins_earlier ? 1 : 0);
  w.strs(sig.tags);
  w.u32(static_cast<std::uint32_t>(sig.signals.size()));
  for (const auto& s : sig.signals) {
    write_signal(w, s);
  }
  w.strs(sig.explains);
  w.strs(sig.refines);
  w.strs(sig.requires_any);
  w.str(sig.headline);
  w.strs(sig.related);
  w.block([&] { write_details(w, sig); });
  w.block([&] { write_examples(w, sig); });
  w.str(sig.file);
  w.u32(sig.builtin ? 1 : 0);
}

// `details_at` set: the details are skipped and their offset in `blob` stored there.
Signature read_signature(Reader& r, bool examples, std::string_view blob, std::uint32_t* details_at) {
  Signature sig;
  sig.id = r.str();
  sig.title = r.str();
  sig.area = r.str();
  const auto role = r.u32();
  const auto severity = r.u32();
  sig.role = role <= static_cast<std::uint32_t>(Role::context) ? static_cast<Role>(role) : Role::context;
  sig.severity =
      severity <= static_cast<std::uint32_t>(Severity::critical) ? static_cast<Severity>(severity) : Severity::error;
  sig.priority = static_cast<int>(r.u32());
  sig.generic = r.u32() != 0;
  sig.joins_earlier = r.u32() != 0;
  sig.tags = r.strs();
  sig.signals.resize(r.count());
  for (auto& s : sig.signals) {
    s = read_signal(r);
  }
  sig.explains = r.strs();
  sig.refines = r.strs();
  sig.requires_any = r.strs();
  sig.headline = r.str();
  sig.related = r.strs();
  const auto details_from = r.offset_in(blob); // the block's length, then the block
  const auto details = r.block();
  if (details_at != nullptr) {
    *details_at = static_cast<std::uint32_t>(details_from);
  } else {
    Reader d(details);
    read_details(d, sig);
    if (d.bad() || !d.done()) {
      r.set_bad();
    }
  }
  read_examples(r, sig, examples);
  sig.file = r.str();
  sig.builtin = r.u32() != 0;
  return sig;
}

} // namespace

std::string serialize(const std::vector<Signature>& entries) {
  Writer w;
  w.out.append(k_magic);
  w.u32(k_version);
  w.u32(static_cast<std::uint32_t>(entries.size()));
  for (const auto& sig : entries) {
    write_signature(w, sig);
  }
  return std::move(w.out);
}

std::optional<std::vector<Signature>> deserialize(std::string_view blob, bool examples,
                                                  std::vector<std::uint32_t>* details_at) {
  if (blob.substr(0, k_magic.size()) != k_magic || blob.size() > 0xffffffffu) {
    return std::nullopt;
  }
  Reader r(blob.substr(k_magic.size()));
  if (r.u32() != k_version) {
    return std::nullopt;
  }
  std::vector<Signature> entries(r.count());
  if (details_at != nullptr) {
    details_at->assign(entries.size(), 0);
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i] = read_signature(r, examples, blob, details_at != nullptr ? &(*details_at)[i] : nullptr);
    if (r.bad()) {
      return std::nullopt;
    }
  }
  if (!r.done()) {
    return std::nullopt;
  }
  return entries;
}

bool read_details(std::string_view blob, std::uint32_t at, Signature& sig) {
  if (at >= blob.size()) {
    return false;
  }
  Reader r(blob.substr(at));
  Reader d(r.block());
  read_details(d, sig);
  return !r.bad() && !d.bad() && d.done();
}

} // namespace denpex::catalog
