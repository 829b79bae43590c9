// `coopgnn bench export-blocks`: writes sampled blocks, their input features, labels and the
// model's weights as .npy files, and times coopgnn's own forward + backward on exactly those
// blocks, so that bench/pyg_baseline.py can run PyTorch Geometric's layers on identical input in
// the same run (README "Experiments").
//
// Layout of OUT (all arrays little-endian .npy):
//   meta.json                    options, shapes, parameter names, coopgnn seconds per batch
//   params/<name>.npy            float32 parameters (e.g. sage0.w_self [in, out])
//   batch<b>/block<i>_{src_ids,indptr,indices,weights,src_degree}.npy, block<i>_num_dst in
//                                meta.json; i = conv index (0 = input side)
//   batch<b>/x.npy               float32 [num_src of block 0, F] input features
//   batch<b>/labels.npy          int64 [num seeds]
//   batch<b>/logits.npy          float32 coopgnn's logits (no dropout), the cross-check target
//   batch<b>/grads/<name>.npy    float32 coopgnn's weight gradients of that batch's loss, shaped
//                                as params/<name>.npy (the gradient cross-check target)
//   batch<b>/x_grad.npy          float32 [num_src of block 0, F] dL/dx, with --input-grad only
//
// Timing (meta.json "timing"): `warmup` untimed then `repeats` timed repetitions of zero_grad +
// forward + loss + backward per batch, the median kept, on one host PE whose kernels (BLIS and the
// parallel host ops) use `threads` host threads (meta.json "threads"; the peer pins torch to it).
// The first layer's backward computes dL/dx only with input_grad (the trainer never does without
// learnable embeddings).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/sample/sample.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"

namespace coopgnn::bench {

struct export_options {
  sampler_kind sampler = sampler_kind::ns;
  std::vector<int> fanouts = {10, 10};
  std::int64_t batch_size = 1024;
  int batches = 3;
  int repeats = 5;          ///< timed repetitions of forward + backward per batch (median kept)
  int warmup = 2;           ///< untimed repetitions before them
  bool input_grad = false;  ///< the first layer's backward also computes dL/dx (--input-grad)
  int threads = 1;  ///< the PE's host thread budget (--threads; train_config::threads_per_pe)
  std::string model = "sage";
  std::int64_t hidden = 64;
  std::uint64_t seed = 0;
};

/// Samples `batches` full batches of the keyed epoch-1 order (as the trainer would, one PE;
/// wrapping around the order's end, train_config::wrap_around), writes them with a freshly
/// initialised model to `out`, and times zero_grad + forward + backward (no dropout, loss =
/// softmax cross-entropy / B) `warmup` + `repeats` times per batch on the host backend, keeping
/// the median of the timed ones (seconds); writes the last repetition's logits and weight
/// gradients (and dL/dx with input_grad).
/// @returns meta.json's content (also written to out/meta.json)
/// @throws logic_error for invalid options (batches or repeats < 1, warmup < 0, threads < 1) or a
///         dataset
///         without features/labels; io_error when a file cannot be written.
nlohmann::json export_blocks(const dataset& ds, const csc_graph& g, const export_options& o,
                             const std::filesystem::path& out);

}  // namespace coopgnn::bench
