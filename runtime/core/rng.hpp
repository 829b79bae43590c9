// Counter-based random numbers keyed on what is decided (docs/design.md section 4).
//
// Every draw is a pure function of (run seed, purpose, layer) -> a Philox4x32-10 key and of
// (global id, sub-index, minibatch index) -> the counter. No draw depends on which thread, block or
// PE makes it, so host and CUDA, and any number of PEs and threads, produce identical samples.
// Random123's Philox compiles for host and device alike.
#pragma once

#include <Random123/philox.h>

#include <cstdint>

#include "runtime/core/hd.hpp"

namespace coopgnn::rng {

/// What a draw decides; part of the key so that different decisions never share streams.
enum class purpose : std::uint32_t {
  shuffle = 1,  ///< order of training seeds per epoch
  ns = 2,     ///< uniform neighbour sampling: one draw per Floyd step (kernels/sample/ns_floyd.hpp)
  labor = 3,  ///< LABOR-0: one variate per candidate neighbour vertex
  dropout = 4,             ///< dropout masks, per (vertex, column)
  ownership = 5,           ///< the keyed permutation that assigns owners (docs/design.md sec. 5)
  init = 6,                ///< weight initialisation
  generate = 7,            ///< synthetic graph generators
  split = 8,               ///< generated train/val/test splits
  labor_window = 9,        ///< dependent minibatching normals (kernels/sample/labor_variate.hpp)
  negative = 10,           ///< link prediction: tail-corrupted training negatives
  partition = 11,          ///< TMA partitions: random parts, cluster dealing (graph/partition.hpp)
  attention_dropout = 12,  ///< GAT: per (destination, source, head) attention-coefficient masks
};

/// A Philox key: the stream of one (run seed, purpose, layer).
struct stream {
  std::uint32_t k0;
  std::uint32_t k1;
};

/// splitmix64 finaliser: a bijective 64-bit mix used only to derive keys.
COOPGNN_HD inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Key for draws of `p` at `layer` under `run_seed`. Pure function of its arguments.
COOPGNN_HD inline stream make_stream(std::uint64_t run_seed, purpose p, std::uint32_t layer) {
  std::uint64_t const tag = (static_cast<std::uint64_t>(p) << 32) | layer;
  std::uint64_t const k = mix64(run_seed ^ mix64(tag));
  return stream{static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32)};
}

/// Four 32-bit words for counter (id, sub, batch) under stream `s`.
/// @param id     the global vertex or edge id being decided (64 bits)
/// @param sub    a sub-index (edge position within a neighbour list, feature column, ...)
/// @param batch  the minibatch (or epoch, or window) index
COOPGNN_HD inline r123::Philox4x32::ctr_type draw4(stream s, std::uint64_t id, std::uint32_t sub,
                                                   std::uint32_t batch) {
  r123::Philox4x32 gen;
  r123::Philox4x32::ctr_type c = {
      {static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(id >> 32), sub, batch}};
  r123::Philox4x32::key_type k = {{s.k0, s.k1}};
  return gen(c, k);
}

/// First word of draw4.
COOPGNN_HD inline std::uint32_t draw_u32(stream s, std::uint64_t id, std::uint32_t sub,
                                         std::uint32_t batch) {
  return draw4(s, id, sub, batch)[0];
}

/// Maps 32 random bits to a float in the open interval (0, 1): the top 23 bits, centred,
/// (k + 0.5) / 2^23. Every value is exactly representable (24 significant bits), so host and
/// device agree bit for bit and neither 0 nor 1 can occur.
COOPGNN_HD inline float to_unit(std::uint32_t x) {
  return (static_cast<float>(x >> 9) + 0.5f) * (1.0f / 8388608.0f);
}

/// A uniform variate in (0, 1) keyed by (s, id, sub, batch).
COOPGNN_HD inline float uniform(stream s, std::uint64_t id, std::uint32_t sub,
                                std::uint32_t batch) {
  return to_unit(draw_u32(s, id, sub, batch));
}

/// A uniform double in (0, 1) from two words: for host-only statistics (generators, init).
inline double uniform_double(std::uint32_t hi, std::uint32_t lo) {
  std::uint64_t const bits = (static_cast<std::uint64_t>(hi) << 21) ^ (lo >> 11);
  return (static_cast<double>(bits & ((1ULL << 53) - 1)) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace coopgnn::rng
