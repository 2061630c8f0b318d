#include <denpex/selftest/selftest.hpp>

#include <algorithm>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include <denpex/context/context.hpp>
#include <denpex/matcher/prefilter.hpp>

#include <re2/filtered_re2.h>
#include <re2/re2.h>

namespace denpex::selftest {

namespace {

struct Event {
  std::uint32_t signature;
  std::uint32_t signal;
  std::uint64_t line_no;
  std::vector<std::pair<std::string, std::string>> captures;
};

class Collect final : public matcher::MatchSink {
public:
  bool matched(const matcher::MatchEvent& ev) override {
    Event e{ev.signature, ev.signal, ev.line_no, {}};
    for (const auto& c : ev.captures()) {
      e.captures.emplace_back(std::string(c.name), std::string(c.value));
    }
    events.push_back(std::move(e));
    return true;
  }
  std::vector<Event> events;
};

std::vector<Event> scan_text(const matcher::Matcher& m, const std::string& text) {
  Collect sink;
  Diagnostics diags;
  source::Chunk chunk{text, 1, 0};
  m.scan(chunk, sink, diags);
  return sink.events;
}

// One identity field of a line's context, as an example states it.
std::optional<std::string> context_field(const context::LineContext& ctx, std::string_view name) {
  auto str = [](const auto& f) -> std::optional<std::string> {
    if (!f) {
      return std::nullopt;
    }
    if constexpr (std::is_same_v<std::decay_t<decltype(f->value)>, std::string>) {
      return f->value;
    } else {
      return std::to_string(f->value);
    }
  };
  if (name == "rank") {
    return str(ctx.rank);
  }
  if (name == "nranks") {
    return str(ctx.nranks);
  }
  if (name == "host") {
    return str(ctx.host);
  }
  if (name == "pid") {
    return str(ctx.pid);
  }
  if (name == "gpu") {
    return str(ctx.gpu);
  }
  if (name == "pci") {
    return str(ctx.pci);
  }
  return std::nullopt;
}

// The identity an example expects its line's own context to give.
void check_context(const catalog::Example& ex, const std::string& where, Report& r) {
  if (ex.context.empty()) {
    return;
  }
  const auto ctx = context::parse_line(ex.line);
  for (const auto& [name, want] : ex.context) {
    const auto got = context_field(ctx, name);
    if (!got) {
      r.failures.push_back({where, fmt::format("context '{}' missing (expected '{}')", name, want)});
    } else if (*got != want) {
      r.failures.push_back({where, fmt::format("context '{}' is '{}', expected '{}'", name, *got, want)});
    }
  }
}

// Whether every match of `pattern` must contain some literal of at least
// k_min_literal bytes, as RE2's FilteredRE2 extracts them (the same kind of
// literal factor Hyperscan skips along on).
constexpr int k_min_literal = 3;

bool has_required_literal(const std::string& pattern) {
  re2::FilteredRE2 f(k_min_literal);
  RE2::Options o;
  o.set_log_errors(false);
  int id = 0;
  if (f.Add(pattern, o, &id) != RE2::NoError) {
    return true; // the loader reports a bad pattern
  }
  std::vector<std::string> atoms;
  f.Compile(&atoms);
  return !atoms.empty();
}

} // namespace

Report test_examples(const catalog::Catalog& cat, const matcher::Matcher& m, const std::vector<std::string>& only) {
  Report r;
  for (std::uint32_t s = 0; s < cat.size(); ++s) {
    const auto& sig = cat.at(s);
    if (!only.empty() && std::find(only.begin(), only.end(), sig.id) == only.end()) {
      continue;
    }
    ++r.entries;
    std::vector<bool> signal_covered(sig.signals.size(), false);
    for (std::size_t i = 0; i < sig.match_examples.size(); ++i) {
      const auto& ex = sig.match_examples[i];
      ++r.examples;
      const std::string where = fmt::format("{}: /examples/match/{}", sig.file, i);
      check_context(ex, where, r);
      // Alone, and inside a chunk between unrelated lines (line 2).
      for (int variant = 0; variant < 2; ++variant) {
        const std::string text = variant == 0 ? ex.line : "training step 100 loss 2.31\n" + ex.line + "\nepoch 3 done\n";
        const std::uint64_t want_line = variant == 0 ? 1 : 2;
        auto events = scan_text(m, text);
        std::vector<const Event*> own;
        for (const auto& e : events) {
          if (e.signature == s && e.line_no == want_line) {
            own.push_back(&e);
          }
        }
        if (own.empty()) {
          r.failures.push_back({where, fmt::format("example does not match its entry{}: {}",
                                                   variant == 0 ? "" : " inside a chunk", ex.line)});
          break;
        }
        const Event* chosen = own.front();
        if (!ex.signal.empty()) {
          auto it = std::find_if(own.begin(), own.end(),
                                 [&](const Event* e) { return sig.signals[e->signal].id == ex.signal; });
          if (it == own.end()) {
            r.failures.push_back({where, fmt::format("matched by signal '{}', expected '{}'",
                                                     sig.signals[own.front()->signal].id, ex.signal)});
            break;
          }
          chosen = *it;
        }
        for (const auto* e : own) {
          signal_covered[e->signal] = true;
        }
        // Captures are checked in both placements: a capture that works
        // alone but not between other lines is a bug in its pattern.
        const char* placement = variant == 0 ? "" : " inside a chunk";
        for (const auto& [name, want] : ex.captures) {
          auto it = std::find_if(chosen->captures.begin(), chosen->captures.end(),
                                 [&](const auto& c) { return c.first == name; });
          if (it == chosen->captures.end()) {
            r.failures.push_back({where, fmt::format("capture '{}' missing{} (expected '{}')", name, placement, want)});
          } else if (it->second != want) {
            r.failures.push_back(
                {where, fmt::format("capture '{}' is '{}'{}, expected '{}'", name, it->second, placement, want)});
          }
        }
      }
    }
    for (std::size_t i = 0; i < sig.no_match_examples.size(); ++i) {
      ++r.examples;
      for (const auto& e : scan_text(m, sig.no_match_examples[i])) {
        if (e.signature == s) {
          r.failures.push_back({fmt::format("{}: /examples/no_match/{}", sig.file, i),
                                fmt::format("near-miss matches signal '{}': {}", sig.signals[e.signal].id,
                                            sig.no_match_examples[i])});
          break;
        }
      }
    }
    for (std::size_t k = 0; k < sig.signals.size(); ++k) {
      if (!signal_covered[k]) {
        r.failures.push_back({fmt::format("{}: /signals/{}", sig.file, k),
                              fmt::format("signal '{}' matches none of the entry's examples", sig.signals[k].id)});
      }
    }
  }
  return r;
}

Report lint(const catalog::Catalog& cat, const matcher::Matcher& m) {
  Report r;
  for (std::uint32_t s = 0; s < cat.size(); ++s) {
    const auto& sig = cat.at(s);
    ++r.entries;
    // A pattern the prefilter cannot take is scanned by RE2 over every byte
    // of every log: one such pattern costs about 4x the matching time. An
    // error in the built-in catalog, a warning in a team's own.
    for (std::size_t k = 0; k < sig.signals.size(); ++k) {
      if (!has_required_literal(sig.signals[k].pattern)) {
        (sig.builtin ? r.failures : r.warnings)
            .push_back({fmt::format("{}: /signals/{}/pattern", sig.file, k),
                        fmt::format("has no literal of {} or more bytes that every match contains: the Hyperscan "
                                    "prefilter then runs an automaton at every byte of every log for it (one such "
                                    "pattern, F\\d{{4}} ... file:line], cost 40-60% more scan time on logs it "
                                    "never matched); require a literal the message always has (there: the "
                                    "file extension, \\.(?:cc|h|...):)",
                                    k_min_literal)});
      }
      if (!matcher::hyperscan_expression(sig.signals[k].pattern)) {
        (sig.builtin ? r.failures : r.warnings)
            .push_back({fmt::format("{}: /signals/{}/pattern", sig.file, k),
                        "has no byte-mode form for the Hyperscan prefilter (a non-ASCII character inside [], "
                        "\\p{..}, \\C, \\Q, or \\x above 7f): RE2 alone scans every byte for it, about 4x "
                        "slower; spell it without those (e.g. (?:a|b) instead of [ab] for non-ASCII a, b)"});
      }
    }
    if (sig.role != catalog::Role::cause) {
      continue;
    }
    for (std::size_t i = 0; i < sig.match_examples.size(); ++i) {
      ++r.examples;
      for (const auto& e : scan_text(m, sig.match_examples[i].line)) {
        if (e.signature == s) {
          continue;
        }
        const auto& other = cat.at(e.signature);
        if (other.role == catalog::Role::cause && other.priority == sig.priority && other.signals[e.signal].anchor) {
          r.failures.push_back({fmt::format("{}: /examples/match/{}", sig.file, i),
                                fmt::format("also matched by cause '{}' with the same priority {}: the correlator "
                                            "cannot tell which is more specific; give the narrower entry the "
                                            "higher priority",
                                            other.id, other.priority)});
        }
      }
    }
  }
  return r;
}

} // namespace denpex::selftest
