// symbolize/linetable.h — decodes a code object's location table into address ranges.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace callsite::detail {

/// Source positions of one instruction; -1 stands for None (as co_positions() yields it).
struct Position {
  std::int32_t lineno = -1, end_lineno = -1, colno = -1, end_colno = -1;
  friend bool operator==(const Position &, const Position &) = default;
};

/// Instructions [start, end) (byte offsets) share one position.
struct PositionRange {
  std::uint32_t start, end;
  Position position;
};

enum class LinetableFormat {
  pep626,  ///< 3.10 co_linetable: (byte delta, signed line delta) pairs, -128 = no line
  pep657,  ///< 3.11+ co_linetable: variable-length entries with columns (Objects/locations.md)
};

/// Decodes `table` into ranges sorted by address, adjacent, none empty. Malformed input
/// (a truncated entry) stops decoding at the last complete entry; it never reads past `size`.
std::vector<PositionRange> decode_linetable(const std::uint8_t *table, std::size_t size,
                                            int firstlineno, LinetableFormat format);

/// The position of the instruction at byte offset `lasti` (binary search); a miss (past the
/// table) is all -1, as CPython's PyCode_Addr2Line reports -1 there.
Position position_at(const std::vector<PositionRange> &ranges, int lasti) noexcept;

}  // namespace callsite::detail
