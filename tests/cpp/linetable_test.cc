// tests/cpp/linetable_test.cc — the location-table decoders on hand-built tables, including
// malformed ones that no compiler emits (CPython's own oracle cannot produce those).
#include <gtest/gtest.h>

#include <vector>

#include "symbolize/linetable.h"

using callsite::detail::decode_linetable;
using callsite::detail::LinetableFormat;
using callsite::detail::Position;
using callsite::detail::position_at;

namespace {

// First byte of a 3.11+ entry: 1 CCCC LLL (code, length-1 in code units).
std::uint8_t entry(int code, int units) { return std::uint8_t(0x80 | (code << 3) | (units - 1)); }

TEST(Pep657, ShortOneLineLongNoColumnAndNone) {
  const std::vector<std::uint8_t> t = {
      entry(1, 2), 0x35,             // short form 1: col = 1*8 + 3 = 11, end = 11 + 5
      entry(11, 1), 4, 9,            // one-line, line + 1, cols 4..9
      entry(14, 1), 0x0A, 2, 1, 201 & 63 | 64, 201 >> 6,  // long: line+5, end+2, col 0, end 200
      entry(13, 3), 0x03,            // no columns, line - 1
      entry(15, 1),                  // no location
  };
  const auto r = decode_linetable(t.data(), t.size(), 10, LinetableFormat::pep657);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].start, 0u);
  EXPECT_EQ(r[0].end, 4u);
  EXPECT_EQ(r[0].position, (Position{10, 10, 11, 16}));
  EXPECT_EQ(r[1].position, (Position{11, 11, 4, 9}));
  EXPECT_EQ(r[2].position, (Position{16, 18, 0, 200}));
  EXPECT_EQ(r[3].position, (Position{15, 15, -1, -1}));
  EXPECT_EQ(r[4].position, (Position{-1, -1, -1, -1}));
  EXPECT_EQ(r[4].end, 16u);
  EXPECT_EQ(position_at(r, 2), r[0].position);
  EXPECT_EQ(position_at(r, 4), r[1].position);
  EXPECT_EQ(position_at(r, 14), r[4].position);
  EXPECT_EQ(position_at(r, 16), Position{});  // past the table
  EXPECT_EQ(position_at(r, -1), Position{});
}

TEST(Pep657, LongFormZeroColumnMeansNone) {
  // Column varints store column + 1, so 0 encodes "no column" (None in co_positions()).
  const std::vector<std::uint8_t> t = {entry(14, 1), 0, 0, 0, 0};
  const auto r = decode_linetable(t.data(), t.size(), 7, LinetableFormat::pep657);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].position, (Position{7, 7, -1, -1}));
}

TEST(Pep657, TruncatedEntriesStopDecodingWithoutOverrun) {
  const std::vector<std::uint8_t> whole = {entry(11, 1), 4, 9, entry(14, 1), 0x0A, 2, 1, 5};
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    // Copy into an exact-size heap buffer so ASan catches any read past `cut`.
    std::vector<std::uint8_t> t(whole.begin(), whole.begin() + long(cut));
    const auto r = decode_linetable(t.data(), t.size(), 1, LinetableFormat::pep657);
    EXPECT_EQ(r.size(), cut >= 3 ? 1u : 0u) << "cut at " << cut;
  }
  const std::vector<std::uint8_t> not_an_entry = {0x05, 0x06};
  EXPECT_TRUE(decode_linetable(not_an_entry.data(), 2, 1, LinetableFormat::pep657).empty());
  const std::vector<std::uint8_t> endless_varint = {entry(13, 1), 0x7f, 0x7f, 0x7f, 0x7f,
                                                    0x7f, 0x7f, 0x7f};
  EXPECT_TRUE(decode_linetable(endless_varint.data(), endless_varint.size(), 1,
                               LinetableFormat::pep657)
                  .empty());
}

TEST(Pep626, ZeroLengthEntriesStillMoveTheLine) {
  // (bytes, line delta): 0-length entries accumulate their delta (3.10 advance()); -128 is
  // "no line" and leaves the running line alone.
  const std::vector<std::uint8_t> t = {0, 3, 6, 1, 4, std::uint8_t(-128), 2, std::uint8_t(-2)};
  const auto r = decode_linetable(t.data(), t.size(), 20, LinetableFormat::pep626);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].start, 0u);
  EXPECT_EQ(r[0].end, 6u);
  EXPECT_EQ(r[0].position.lineno, 24);
  EXPECT_EQ(r[1].position.lineno, -1);
  EXPECT_EQ(r[2].position.lineno, 22);
  EXPECT_EQ(position_at(r, 11), r[2].position);
  const std::vector<std::uint8_t> odd = {4, 1, 9};  // a dangling half pair is ignored
  EXPECT_EQ(decode_linetable(odd.data(), odd.size(), 1, LinetableFormat::pep626).size(), 1u);
}

}  // namespace
