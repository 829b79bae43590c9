// Bad (and borderline valid) inputs of make_block and exclude_edges with the host reference's
// error messages written out, shared by tests/kernels/sampling_entries_test.cpp (host and
// emulated device, every CI run) and tests/kernels/sample_gpu_test.cpp (CUDA): one list, every
// backend, the same logic_error text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/exec_context.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn::test {

/// make_block(ctx, g, dst, sample) on the untyped 20-vertex graph of run_block_checks.
struct block_check_case {
  std::string name;
  std::vector<vid_t> dst;
  std::vector<eid_t> indptr;
  std::vector<vid_t> nbrs;
  std::vector<float> weights;
  std::string error;  ///< the host's message; empty: valid input
};

/// exclude_edges(ctx, seeds, sample, keys).
struct exclude_check_case {
  std::string name;
  std::vector<vid_t> seeds;
  std::vector<eid_t> indptr;
  std::vector<vid_t> nbrs;
  std::vector<float> weights;
  std::vector<std::uint64_t> keys;
  std::string error;  ///< as block_check_case::error
};

/// The make_block cases (13): out-of-range destinations and sources, repeated destinations,
/// offset counts and sizes that disagree, their order when several apply, and valid
/// boundaries (ids 0 and |V| - 1). Host memory; the expected messages are written by hand.
std::vector<block_check_case> block_check_cases();
/// The exclude_edges cases (15): unordered or repeated keys, offsets outside the sample, keys
/// outside [0, 2^32), the first bad edge of a row, and valid boundaries. Host memory.
std::vector<exclude_check_case> exclude_check_cases();

/// Runs every case through the sampling entries (kernels/sample/sampling.hpp) on ctx, operands
/// uploaded to ctx.space(): a case with an error must throw logic_error whose message is the
/// error exactly (no check location), and a valid case must give the host
/// backend's result. Records gtest failures naming the case; a failed case leaves ctx usable
/// for the next (the lists end with valid cases).
void run_block_checks(const exec_context& ctx);
void run_exclude_checks(const exec_context& ctx);

}  // namespace coopgnn::test
