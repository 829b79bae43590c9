// Reading a range of columns of a (2, N) .npy image whose bytes come from somewhere else than a
// whole buffer: the file (npy_two_row_reader, npy.hpp) or an .npz member read front to back
// (npz_two_row_reader, npz.hpp). One implementation of the C / Fortran layouts for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "runtime/graph/npy.hpp"

namespace coopgnn::detail {

/// Fetches data bytes [offset, offset + out.size()) of the array (offset counted from its first
/// element) into `out`. `cursor` is 0 for row 0 and 1 for row 1 (Fortran order: always 0), so
/// that a source read front to back keeps one position per row.
using npy_fetch = std::function<void(int cursor, std::uint64_t offset, std::span<std::byte> out)>;

/// Columns [first, first + k) of the (2, N) array `h` into row0 / row1 (k the length of the
/// non-empty one; an empty span skips its row), converted to int64 as read_npy converts.
/// `bytes` and `pairs` are scratch buffers the caller keeps between calls. @pre h has shape
/// (2, N) and first + k <= N. @throws io_error from `fetch` or the conversion ("WHAT: ...").
void read_two_row_columns(const npy_header& h, const std::string& what, std::int64_t first,
                          std::span<std::int64_t> row0, std::span<std::int64_t> row1,
                          const npy_fetch& fetch, std::vector<std::byte>& bytes,
                          std::vector<std::int64_t>& pairs);

}  // namespace coopgnn::detail
