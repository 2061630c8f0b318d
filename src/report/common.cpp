#include <denpex/report/report.hpp>

#include <denpex/correlate/describe.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

namespace denpex::report {

std::string location(const correlate::Diagnosis& d, const correlate::Evidence& e) {
  const std::string& name = d.source_name(e.source);
  return fmt::format("{}:{}", name, e.line_no);
}

std::vector<WhoPart> who_parts(const correlate::Evidence& e, std::string_view device, const std::set<int>* together) {
  std::vector<WhoPart> parts;
  if (together != nullptr) {
    parts.push_back({"ranks", fmt::format("{} (together)", format_ranks(*together))});
  } else if (e.ctx.rank) {
    parts.push_back({"rank", std::to_string(e.ctx.rank->value)});
  } else if (e.ctx.local_rank) {
    parts.push_back({"local rank", std::to_string(e.ctx.local_rank->value)});
  }
  if (e.ctx.host) {
    parts.push_back({"host", e.ctx.host->value, true});
  }
  if (e.ctx.pci) {
    parts.push_back({std::string(device), e.ctx.pci->value, true});
  } else if (e.ctx.gpu) {
    parts.push_back({"GPU", std::to_string(e.ctx.gpu->value)});
  }
  if (e.ctx.pid) {
    parts.push_back({"pid", std::to_string(e.ctx.pid->value)});
  }
  return parts;
}

FixContext fix_context(const correlate::Diagnosis& d, const correlate::Incident& inc) {
  FixContext c;
  const auto& name = d.source_name(inc.first.source);
  if (!name.empty() && name != "?" && name != "-" && name != "<stdin>") {
    // An archive member ("node.tar.gz:var/log/x.log") is named by its archive.
    const auto colon = name.find(".tar");
    c.log = colon != std::string::npos && name.find(':', colon) != std::string::npos ? name.substr(0, name.find(':', colon))
                                                                                  : name;
  }
  c.stacks = d.stacks;
  return c;
}

std::string with_log(std::string_view command, const FixContext& c) {
  const bool plain = std::all_of(c.log.begin(), c.log.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || std::string_view("/._-+:@%,").find(ch) != std::string_view::npos;
  });
  std::string log;
  if (plain) {
    log = c.log;
  } else {
    log = "'";
    for (const char ch : c.log) {
      log += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    }
    log += "'";
  }
  std::string out(command);
  for (std::size_t at = out.find("{log}"); at != std::string::npos; at = out.find("{log}", at + log.size())) {
    out.replace(at, 5, log);
  }
  return out;
}

namespace {

bool has_stack(const FixContext& c, std::string_view stack) {
  return std::find(c.stacks.begin(), c.stacks.end(), stack) != c.stacks.end();
}

// DeepSpeed's multi-node runner forwards these prefixes to every node
// (deepspeed/launcher/runner.py, EXPORT_ENVS); anything else needs
// .deepspeed_env.
bool deepspeed_forwards(std::string_view var) {
  for (std::string_view p : {"NCCL", "PYTHON", "UCX", "MV2", "MLFLOW"}) {
    if (var.substr(0, p.size()) == p) {
      return true;
    }
  }
  return false;
}

} // namespace

std::vector<std::string> env_lines(const catalog::Signature& sig, const FixContext& c) {
  std::vector<std::string> out;
  if (sig.fix.env.empty()) {
    return out;
  }
  if (has_stack(c, "kubernetes")) {
    std::string env = "env:";
    for (const auto& [k, v] : sig.fix.env) {
      env += fmt::format(" [{{name: {}, value: \"{}\"}}]", k, v);
    }
    out.push_back(env + "  (the pod's container spec)");
    return out;
  }
  if (has_stack(c, "slurm")) {
    std::string line = "#SBATCH --export=ALL";
    for (const auto& [k, v] : sig.fix.env) {
      line += fmt::format(",{}={}", k, v);
    }
    out.push_back(std::move(line));
    return out;
  }
  for (const auto& [k, v] : sig.fix.env) {
    out.push_back(fmt::format("export {}={}", k, v));
  }
  if (has_stack(c, "deepspeed")) {
    for (const auto& [k, v] : sig.fix.env) {
      if (!deepspeed_forwards(k)) {
        out.push_back(fmt::format("echo '{}={}' >> .deepspeed_env", k, v));
      }
    }
  }
  return out;
}

std::string stack_fix(const catalog::Signature& sig, const FixContext& c) {
  for (const auto& stack : c.stacks) {
    for (const auto& [name, what] : sig.fix.stacks) {
      if (name == stack) {
        return name + ": " + with_log(what, c);
      }
    }
  }
  return {};
}

std::vector<std::string> fix_commands(const catalog::Signature& sig, const FixContext& c) {
  std::vector<std::string> out;
  if (auto own = stack_fix(sig, c); !own.empty()) {
    out.push_back(std::move(own));
  }
  for (auto& line : env_lines(sig, c)) {
    out.push_back(std::move(line));
  }
  for (const auto& raw : sig.fix.commands) {
    auto cmd = with_log(raw, c);
    if (std::find(out.begin(), out.end(), cmd) == out.end()) {
      out.push_back(std::move(cmd));
    }
  }
  return out;
}

std::vector<std::string> verify_commands(const catalog::Signature& sig, const FixContext& c) {
  std::vector<std::string> out;
  for (const auto& raw : sig.verify.commands) {
    out.push_back(with_log(raw, c));
  }
  return out;
}

std::string_view device_noun(const catalog::Signature& sig) {
  if (sig.area == "network") {
    return "NIC";
  }
  return sig.area == "storage" ? "device" : "GPU";
}

std::string incident_title(const correlate::Incident& inc, const catalog::Catalog& cat) {
  return inc.headline.empty() ? cat.at(inc.signature).title : inc.headline;
}

std::vector<std::string> code_notes(const correlate::Diagnosis& d, const correlate::Incident& inc) {
  std::vector<std::string> notes;
  if (inc.traceback) {
    const auto& tb = *inc.traceback;
    if (const auto* f = tb.raising()) {
      notes.push_back("raised at " + correlate::format_frame(*f) + (f->code.empty() ? "" : ": " + f->code));
    }
    if (const auto* u = tb.user_frame(); u != nullptr && u != tb.raising()) {
      notes.push_back("called from " + correlate::format_frame(*u) + " (the innermost frame outside libraries)");
    }
    if (auto chain = correlate::describe_chain(inc, d); !chain.empty()) {
      notes.push_back(std::move(chain));
    }
  }
  if (auto id = correlate::describe_identity(inc.first, d); !id.empty()) {
    notes.push_back(std::move(id));
  }
  if (auto who = correlate::describe_rank_from(inc, d); !who.empty()) {
    notes.push_back(std::move(who));
  }
  if (auto together = correlate::describe_simultaneous(inc); !together.empty()) {
    notes.push_back(std::move(together));
  }
  return notes;
}

bool worth_listing_missing(const catalog::Signature& sig, const correlate::Incident& inc, std::uint32_t signal) {
  if (sig.signals[signal].anchor) {
    return false;
  }
  auto required = [&](std::uint32_t k) {
    return std::find(sig.requires_any.begin(), sig.requires_any.end(), sig.signals[k].id) != sig.requires_any.end();
  };
  if (!required(signal)) {
    return true;
  }
  return !std::any_of(inc.signals.begin(), inc.signals.end(),
                     [&](const correlate::SignalStatus& st) { return st.signal != signal && st.count > 0 && required(st.signal); });
}

std::string format_time(const correlate::Evidence& e) {
  if (e.time_us) {
    const std::int64_t us = *e.time_us;
    std::time_t secs = static_cast<std::time_t>(us >= 0 ? us / 1'000'000 : (us - 999'999) / 1'000'000);
    const auto frac = static_cast<int>(us - static_cast<std::int64_t>(secs) * 1'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::string out = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}", tm.tm_year + 1900, tm.tm_mon + 1,
                                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac / 1000);
    if (e.ctx.time.wall.tz_minutes) {
      out += " UTC";
    }
    return out;
  }
  if (e.ctx.time.kind == context::ClockKind::monotonic) {
    return fmt::format("{}.{:06}s since boot", e.ctx.time.mono_micros / 1'000'000, e.ctx.time.mono_micros % 1'000'000);
  }
  return {};
}

std::string format_stamp(const context::Timestamp& t) {
  if (t.kind == context::ClockKind::wall) {
    const auto& w = t.wall;
    std::string out = w.year != 0 ? fmt::format("{:04}-", w.year) : std::string();
    out += fmt::format("{:02}-{:02} {:02}:{:02}:{:02}.{:03}", w.month, w.day, w.hour, w.minute, w.second, w.micros / 1000);
    if (w.tz_minutes) {
      const int tz = *w.tz_minutes;
      out += tz == 0 ? std::string("Z") : fmt::format("{}{:02}:{:02}", tz < 0 ? '-' : '+', std::abs(tz) / 60, std::abs(tz) % 60);
    }
    return out;
  }
  if (t.kind == context::ClockKind::monotonic) {
    return fmt::format("{}.{:06}s since boot", t.mono_micros / 1'000'000, t.mono_micros % 1'000'000);
  }
  return {};
}

std::string format_ranks(const std::set<int>& ranks) {
  const auto out = correlate::format_ranks(std::vector<int>(ranks.begin(), ranks.end()));
  return out.empty() ? "-" : out;
}

} // namespace denpex::report
