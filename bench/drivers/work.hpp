// `coopgnn bench work`: the empirical check of Theorems 3.1 and 3.2 of Balin, LaSalle &
// Catalyurek, "Cooperative Minibatching in Graph Neural Networks" (TMLR 2025, section 3; the shape
// of its Figure 2), and of their consequence P W(B/P) >= W(B), which keyed sampling (docs/design.md
// sections 4 and 6) makes hold for every single batch. Output files: docs/results-schema.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "bench/drivers/results.hpp"
#include "kernels/sample/sample.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/graph/csc.hpp"

namespace coopgnn::bench {

/// What `coopgnn bench work` measures. Defaults are the command's defaults.
struct work_options {
  std::vector<sampler_kind> samplers = {sampler_kind::ns, sampler_kind::labor};
  std::vector<int> fanouts = {10, 10, 10};  ///< [L] seeds' layer first; -1 = all neighbours
  std::int64_t min_batch = 64;              ///< smallest B, a power of two
  std::int64_t max_batch = 65536;           ///< largest B, a power of two (capped at the seeds)
  int repeats = 3;                          ///< random seed sets (batches) per (sampler, B)
  std::vector<int> pes = {2, 4, 8};         ///< P of the P W(B/P) >= W(B) check
  std::uint64_t seed = 0;                   ///< run seed: keys seed sets and sampling
  int sample_threads = 1;                   ///< host threads of the sampler (no effect on results)
  double tolerance = 0.01;  ///< relative slack of the checks on means (sampling noise)
};

/// One row of the `rows` table: means over the repeats of one (sampler, B, layer).
struct work_row {
  std::string sampler;
  std::int64_t batch_size = 0;
  int layer = 0;                 ///< l = vertices of layer l + 1 and edges of block l; -1 = total
  double vertices = 0;           ///< mean sampled vertices (block num_src)
  double edges = 0;              ///< mean sampled edges (block num_edges)
  double vertices_per_seed = 0;  ///< vertices / batch_size
  double edges_per_seed = 0;     ///< edges / batch_size
};

/// One check of docs/results-schema.md. `quantity` ("vertices" or "edges", totals over layers)
/// says which work count W the check is on; it extends the schema's keys.
struct work_check {
  std::string sampler;
  std::string check;            ///< "work_per_seed_nonincreasing", "concave" or "P*W(B/P)>=W(B)"
  std::string quantity;         ///< "vertices" or "edges"
  std::int64_t batch_size = 0;  ///< see run_work_bench for which B a check is reported at
  int pes = 1;                  ///< P for "P*W(B/P)>=W(B)", 1 otherwise
  double lhs = 0;
  double rhs = 0;
  bool pass = false;
};

/// Everything one run measured.
struct work_result {
  std::vector<std::int64_t> batch_sizes;  ///< the doubling grid actually measured
  std::int64_t num_candidates = 0;        ///< seeds drawn from (training vertices or all)
  std::vector<work_row> rows;             ///< sampler-major, then B, then layer 0..L-1, -1
  std::vector<work_check> checks;
  double seconds = 0;  ///< wall time of the measurement
};

/// Called after every (sampler, B) point: sampler name, B, points done, points in total.
using work_progress =
    std::function<void(const std::string&, std::int64_t, std::int64_t, std::int64_t)>;

/// Validates `o` against `num_candidates` seeds. Messages name the command-line option.
/// @throws logic_error for an empty --samplers, an empty --fanouts or a fanout of 0 or < -1,
///   --min-batch or --max-batch < 1 or not a power of two, --min-batch > --max-batch,
///   --min-batch > num_candidates, --repeats < 1, a --pes value < 1, a sampler or P given twice,
///   --sample-threads < 1, a tolerance outside [0, 1).
void validate_work_options(const work_options& o, std::int64_t num_candidates);

/// The powers of two B with o.min_batch <= B <= min(o.max_batch, num_candidates), ascending.
/// Preconditions as validate_work_options (which it calls).
std::vector<std::int64_t> work_batch_grid(const work_options& o, std::int64_t num_candidates);

/// Random seed set number `repeat` of size b: the b candidates with the smallest keys
/// draw4(make_stream(seed, purpose::shuffle, 0), v, 0, repeat) (64 bits, ties by id). Distinct
/// when `candidates` is; the set of size b is a prefix of the set of size 2b (nested, so the
/// points of one repeat use common random numbers). Returned in key order.
/// @param candidates  [N] vertex ids
/// @throws logic_error when b < 0 or b > N.
std::vector<vid_t> draw_seed_set(std::span<const vid_t> candidates, std::int64_t b,
                                 std::uint64_t seed, std::uint32_t repeat);

/// [P + 1] offsets of P contiguous chunks of n seeds whose sizes differ by at most one (the
/// first n mod P chunks hold one more). @throws logic_error when P < 1 or n < 0.
std::vector<std::int64_t> chunk_offsets(std::int64_t n, int pes);

/// Measures sampled work against the batch size (Theorems 3.1 and 3.2 of the cooperative paper,
/// section 3). For each sampler and each B of work_batch_grid, for repeat r < o.repeats: seeds =
/// draw_seed_set(candidates, B, o.seed, r), sampled with sample_independent under batch_key
/// {sampler, o.fanouts, o.seed, batch = r}; per layer l it records blocks[l].num_src() (vertices)
/// and blocks[l].num_edges() (edges), and the totals over layers (layer -1). Rows hold means
/// over repeats, per seed = mean / B.
///
/// Checks, per sampler, with W(B) = the mean total vertices or edges over repeats:
///  - "work_per_seed_nonincreasing" (Theorem 3.1), vertices and edges, reported at 2B:
///    lhs = W(2B) / 2B, rhs = W(B) / B, pass iff lhs <= rhs (1 + tolerance);
///  - "concave" (Theorem 3.2), edges only, reported at the middle point 2B of (B, 2B, 4B):
///    lhs = (W(4B) - W(2B)) / 2B, rhs = (W(2B) - W(B)) / B, pass iff lhs <= rhs (1 + tolerance);
///  - "P*W(B/P)>=W(B)" (the consequence), vertices and edges, for each P of o.pes with B >= P:
///    per batch, lhs = the sum over the P chunks of chunk_offsets(B, P) of the work of sampling
///    that chunk alone (same batch key), rhs = the work of the whole batch; reported lhs/rhs are
///    means over repeats and pass iff lhs >= rhs for every batch, exactly (no tolerance).
///
/// @param ctx         host backend; ctx.threads() threads sample (results do not depend on it)
/// @param g           CSC of in-edges
/// @param candidates  [N] distinct vertex ids in [0, |V|) to draw seeds from
/// @param progress    optional, called after each (sampler, B)
/// @throws logic_error from validate_work_options or for a candidate outside [0, |V|).
/// Deterministic: a pure function of (g, candidates, o) apart from `seconds`.
work_result run_work_bench(const exec_context& ctx, const csc_graph& g,
                           std::span<const vid_t> candidates, const work_options& o,
                           const work_progress& progress = {});

/// The JSON object of docs/results-schema.md, section `work`: the header's keys, fanouts,
/// repeats, seed, batch_sizes, samplers, rows, checks, plus tolerance, pes, num_candidates,
/// seconds.
nlohmann::ordered_json work_to_json(const result_header& h, const work_options& o,
                                    const work_result& r);

/// The CSV of the rows table: header "sampler,batch_size,layer,vertices,edges,
/// vertices_per_seed,edges_per_seed", one row per line, numbers in shortest round-trip form.
std::string work_to_csv(const work_result& r);

/// A readable console table: per sampler and B, total vertices and edges per seed and the mean
/// P W(B/P) / W(B) of edges per P; then every check, one line each, with the tolerance.
std::string format_work_table(const work_options& o, const work_result& r);

}  // namespace coopgnn::bench
