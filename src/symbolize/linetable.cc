// symbolize/linetable.cc — the two CPython location-table formats, decoded once per code object.
#include "symbolize/linetable.h"

#include <algorithm>

namespace callsite::detail {
namespace {

// line + delta as CPython computes it (built with -fwrapv: wraps past INT_MAX), without the
// signed overflow: a co_firstlineno near INT_MAX is legal (code.replace). A wrapped, negative
// line reads as "no line".
inline int add_line(int line, std::int32_t delta) {
  return static_cast<int>(static_cast<std::uint32_t>(line) + static_cast<std::uint32_t>(delta));
}

// 3.10 (Objects/lnotab_notes.txt): pairs (unsigned byte delta, signed line delta); a line
// delta of -128 means "no line" and leaves the running line unchanged. Zero-length entries
// still move the line (advance() in 3.10 Objects/codeobject.c), so accumulate before skipping.
void decode_pep626(const std::uint8_t *p, std::size_t size, int line,
                   std::vector<PositionRange> &out) {
  std::uint32_t addr = 0;
  for (std::size_t i = 0; i + 1 < size; i += 2) {
    const std::uint32_t end = addr + p[i];
    const int delta = static_cast<std::int8_t>(p[i + 1]);
    int this_line = -1;
    if (delta != -128) {
      line = add_line(line, delta);
      this_line = line;
    }
    if (end > addr) out.push_back({addr, end, Position{this_line, -1, -1, -1}});
    addr = end;
  }
}

// 3.11+ (Objects/locations.md): each entry starts with a byte 1CCCCLLL — code C, length L+1
// code units; varints are 6-bit little-endian chunks with bit 6 as continuation.
struct Reader {
  const std::uint8_t *p, *end;
  bool ok = true;
  std::uint32_t varint() {
    std::uint32_t value = 0;
    for (unsigned shift = 0;; shift += 6) {
      if (p == end || shift > 30) return ok = false, 0;
      const std::uint8_t b = *p++;
      value |= std::uint32_t(b & 63) << shift;
      if (!(b & 64)) return value;
    }
  }
  std::int32_t svarint() {
    const std::uint32_t u = varint();
    return (u & 1) ? -std::int32_t(u >> 1) : std::int32_t(u >> 1);
  }
  std::uint8_t byte() {
    if (p == end) return ok = false, 0;
    return *p++;
  }
};

void decode_pep657(const std::uint8_t *data, std::size_t size, int line,
                   std::vector<PositionRange> &out) {
  Reader r{data, data + size};
  std::uint32_t addr = 0;
  while (r.p < r.end) {
    const std::uint8_t first = *r.p++;
    if (!(first & 0x80)) break;  // not at an entry start: malformed
    const int code = (first >> 3) & 15;
    const std::uint32_t end = addr + ((first & 7) + 1) * 2;
    Position pos;
    // Mirrors advance_with_locations() in 3.11-3.13 Objects/codeobject.c.
    switch (code) {
      case 15:  // PY_CODE_LOCATION_INFO_NONE: no position, running line unchanged
        break;
      case 14:  // LONG: line delta, end-line delta, column+1, end column+1
        line = add_line(line, r.svarint());
        pos.lineno = line;
        pos.end_lineno = add_line(line, std::int32_t(r.varint()));
        pos.colno = std::int32_t(r.varint() - 1u);  // 0 (unknown) → -1, unsigned: no overflow
        pos.end_colno = std::int32_t(r.varint() - 1u);
        break;
      case 13:  // NO_COLUMNS
        line = add_line(line, r.svarint());
        pos.lineno = pos.end_lineno = line;
        break;
      case 10: case 11: case 12:  // ONE_LINE0..2: line delta 0..2, column and end column bytes
        line = add_line(line, code - 10);
        pos.lineno = pos.end_lineno = line;
        pos.colno = r.byte();
        pos.end_colno = r.byte();
        break;
      default: {  // SHORT0..9: same line; column = code*8 + high bits, width in low nibble
        const std::uint8_t second = r.byte();
        pos.lineno = pos.end_lineno = line;
        pos.colno = (code << 3) | (second >> 4);
        pos.end_colno = pos.colno + (second & 15);
      }
    }
    if (!r.ok) break;
    out.push_back({addr, end, pos});
    addr = end;
  }
}

}  // namespace

std::vector<PositionRange> decode_linetable(const std::uint8_t *table, std::size_t size,
                                            int firstlineno, LinetableFormat format) {
  std::vector<PositionRange> out;
  out.reserve(size / 2 + 1);
  if (format == LinetableFormat::pep626)
    decode_pep626(table, size, firstlineno, out);
  else
    decode_pep657(table, size, firstlineno, out);
  out.shrink_to_fit();
  return out;
}

Position position_at(const std::vector<PositionRange> &ranges, int lasti) noexcept {
  if (lasti < 0) return {};
  const auto addr = std::uint32_t(lasti);
  auto it = std::upper_bound(ranges.begin(), ranges.end(), addr,
                             [](std::uint32_t a, const PositionRange &r) { return a < r.end; });
  if (it == ranges.end() || addr < it->start) return {};
  return it->position;
}

}  // namespace callsite::detail
