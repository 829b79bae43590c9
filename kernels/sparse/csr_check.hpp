// Structural checks of a CSR-by-destination edge list shared by the host sparse kernels
// (spmm, sddmm, edge_softmax). Internal: not part of the public kernel API.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/types.hpp"

namespace coopgnn::detail {

/// Throws logic_error, with the message prefixed by `fn`, unless indptr is a CSR offset array over
/// num_edges edges: non-empty (num_rows + 1 >= 1 offsets), indptr[0] == 0, non-decreasing, and
/// indptr.back() == num_edges. Does not look at index values.
void check_indptr(const char* fn, std::span<const eid_t> indptr, std::int64_t num_edges);

/// Throws logic_error, naming `what`, unless size == num_edges (one entry per edge).
void check_edge_array(const char* fn, const char* what, std::size_t size, std::int64_t num_edges);

}  // namespace coopgnn::detail
