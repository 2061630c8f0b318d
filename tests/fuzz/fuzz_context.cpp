// libFuzzer target: the context parsers on arbitrary bytes (issue 9).
//
// Feeds the input, as a line, a path and a chunk, to find_timestamp,
// parse_line, parse_path, normalize_pci and SourceContext, and checks a few
// invariants that must hold for any input (normalised PCI ids have a fixed
// shape; a parsed wall time converts to epoch microseconds without overflow,
// which UBSan checks).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <denpex/context/context.hpp>

namespace {

void check(bool cond) {
  if (!cond) {
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::context;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  if (auto ts = find_timestamp(input)) {
    if (ts->kind == ClockKind::wall) {
      (void)to_epoch_micros(ts->wall, 2024);
      (void)to_epoch_micros(ts->wall, 0);
    }
  }

  const LineContext ctx = parse_line(input);
  if (ctx.time.kind == ClockKind::wall) {
    (void)to_epoch_micros(ctx.time.wall, 2024);
  }
  if (ctx.pci) {
    // "0000:3b:00": the normalised form is always 10 bytes (see context.hpp).
    check(ctx.pci->value.size() == 10);
  }

  const std::string pci = normalize_pci(input);
  check(pci.empty() || pci.size() == 10);

  (void)parse_path(input);

  // The input as a chunk: the context of its last line, looking back through
  // the earlier lines for a stamp, then the next chunk inherits the state.
  SourceContext src(input.substr(0, 64));
  const auto last_nl = input.rfind('\n', input.empty() ? 0 : input.size() - 1);
  const std::size_t line_pos = last_nl == std::string_view::npos ? 0 : last_nl + 1;
  std::string_view line = input.substr(line_pos);
  if (!line.empty() && line.back() == '\n') {
    line.remove_suffix(1);
  }
  (void)src.context_for(input, line_pos, line);
  src.end_chunk(input);
  (void)src.context_for(input, 0, input.substr(0, input.find('\n')));
  return 0;
}
