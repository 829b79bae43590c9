// Checkpoints and saved models (docs/design.md section 10; README "Checkpoints and interrupts").
//
// A checkpoint directory DIR holds one sub-directory per saved position, ckpt-EEEEEE-BBBBBB
// (epoch E, batches B of it done), and a pointer file DIR/latest naming the newest complete one.
// Each sub-directory holds .npy arrays (runtime/graph/npy.hpp) and manifest.json: the format
// and version, the run's identity (the options that decide its numbers), the position, the
// optimizer step counts, and per array its file, dtype, shape, byte size and CRC-32 of the whole
// file. Writing: every file of a new checkpoint goes to ckpt-....tmp.PID, is fsync'ed, the
// directory is renamed into place and fsync'ed, then DIR/latest is replaced by rename (written
// and fsync'ed first). A crash at any point leaves DIR/latest naming a complete checkpoint; the
// one before the newest is kept as well, older ones are removed. A run writing into DIR holds
// an advisory lock on DIR/.lock (checkpoint_lock), so no second run can write there meanwhile.
//
// A saved model (--save-model DIR; `tma` writes its best aggregate the same way) is
// manifest.json (kind "model", version 2: the model configuration, the run's identity, and per
// tensor its name, shape, dtype and order) with model.npz: one float32 array per parameter tensor
// under the model's own names ("sage0.w_self", "linear2.bias", ...) and, with learnable input
// embeddings, "embeddings" [|V|, D]. numpy.load(DIR/model.npz) reads it (docs/usage.md,
// "Saved models"). Version 1 models (one flat params.npy) are still read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "models/model.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/graph/dataset.hpp"
#include "pipeline/config.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn {

/// The options of a run that decide its numbers, keyed by their command-line names: the option
/// table's arithmetic options (arithmetic_options, config.hpp), "--task", "--mode", "--pes",
/// "--backend", "--relation-fanout" (typed runs), "dataset", "dataset.num_nodes", ... for the
/// dataset and "dataset.content" (dataset_fingerprint, computed here unless `extra` holds it),
/// plus `extra` (tool-level options such as "--feature", merged in). A resumed run must match the
/// checkpoint in every one of them (check_resumable). Options that change only timings, cache
/// counters or what is printed (--epochs, --eval-every, --metrics-out, --no-progress, --quiet,
/// --sample-threads, --threads-per-pe, --peer-timeout, --cache-*, --feature-storage,
/// --sample-on) are not part of it.
/// Values are JSON strings, numbers, booleans and (--fanouts) an array of integers; GAT and
/// link-prediction options appear only for those runs, "--drop-last" and "wrap_around" only
/// when set (true), "--gemm-math" only when tf32. Host memory; reads the edges, features and
/// split of `ds` for the fingerprint (@throws io_error as dataset_fingerprint does).
nlohmann::json run_identity(const dataset& ds, const train_config& cfg,
                            const nlohmann::json& extra = nlohmann::json::object());

/// The file, in a feature table's directory, that caches the hash of large tables
/// (dataset_fingerprint): JSON {"format": "coopgnn-content-hash", "version": 1, "files": {NAME:
/// {"size": bytes, "mtime_ns": ns, "xxh64": "16 hex digits"}}}.
inline constexpr const char* kContentHashCache = ".coopgnn-content-hash.json";
/// Feature tables of at least this many bytes (1 GiB) have their hash cached beside their file.
inline constexpr std::int64_t kContentHashCacheBytes = std::int64_t{1} << 30;

/// The dataset's content fingerprint: "xxh64 edges:H1 features:H2[ split:H3][ labels:H4][
/// link_split:H5]", each H an XXH64 (runtime/core/hash.hpp) in 16 hexadecimal digits:
///   H1 of |V| and the edge arrays src and dst (every edge, as loaded; read a chunk at a time
///      from the edge file when the edges stay there);
///   H2 of every byte of every feature table (the node features, or each node type's on typed
///      graphs) with its rows, columns and element type, at its stored width (float32, float16
///      or bfloat16): the same whether the table is in memory or left in its .npy file
///      (--feature-storage mmap), and independent of threads;
///   H3 of the node-classification split: the train, valid and test vertex arrays (and a typed
///      graph's target type), present when the dataset holds one;
///   H4 of the labels [|V|] and num_classes, present when labels were read;
///   H5 of the link-prediction task's train, valid and test pairs (sources, destinations,
///      labels, query ids and relations: the negatives included) and its user-item range,
///      present when a link task was read.
/// A table of at least `cache_from_bytes` bytes whose .npy file holds exactly its bytes takes
/// its hash from kContentHashCache beside that file when the entry's size and mtime_ns match the
/// file's, and otherwise computes it and stores it there (written to a temporary sibling, then
/// renamed into place; only when the directory is writable, else remembered in this process
/// only). O(|E| + |V| F + |split|) host reads on a first call (several GB/s on one core);
/// deterministic. Two datasets of the same name and sizes but other edges, feature bytes, split
/// or labels differ in it.
/// @throws io_error naming a feature or edge file that cannot be read.
std::string dataset_fingerprint(const dataset& ds,
                                std::int64_t cache_from_bytes = kContentHashCacheBytes);
/// What differs between two dataset_fingerprint strings: the differing parts among "edges",
/// "features", "split", "labels" and "link split", joined ("features", "edges and split",
/// "edges, features and labels"); a split or labels part only one of them holds (a task the
/// other did not read) is no difference. "content (fingerprints of different coopgnn
/// versions)" when only one is a full fingerprint (full_content_fingerprint); "" when they
/// agree. Does not throw beyond std::bad_alloc.
std::string fingerprint_difference(const std::string& a, const std::string& b);
/// Whether `fp` is today's dataset_fingerprint (begins with "xxh64 "; older coopgnn versions
/// wrote "edges:H1 features:H2" of sampled rows, which cannot be compared with it). Does not
/// throw.
bool full_content_fingerprint(const std::string& fp);
/// The note for a checkpoint or saved model whose identity `saved` holds no full content
/// fingerprint (written by an older coopgnn): "WHAT was written before the dataset's content
/// fingerprint covered every feature byte and the split: its dataset is compared by name and
/// sizes only"; "" when it holds one. `what` names it ("the checkpoint DIR"). Does not throw
/// beyond std::bad_alloc.
std::string older_content_note(const nlohmann::json& saved, std::string_view what);

/// Throws io_error "MANIFEST: cannot resume: FIELD is A in the checkpoint, B in this run" for
/// the first field of `saved` that `current` lacks or holds differently (and for a field of
/// `current` the checkpoint lacks). Both are run_identity objects.
void check_resumable(const nlohmann::json& saved, const nlohmann::json& current,
                     const std::filesystem::path& manifest);

/// The first difference between two run_identity objects, as check_resumable words it ("FIELD is
/// A in the checkpoint, B in this run", "the checkpoint does not record FIELD (this run: B)",
/// "FIELD is A in the checkpoint, unset in this run"); "" when they are equal. A saved identity
/// without dataset.content, or with an older one (not full_content_fingerprint), is compared on
/// the other fields only (older_content_note words it). Does not throw beyond std::bad_alloc.
std::string identity_difference(const nlohmann::json& saved, const nlohmann::json& current);

/// work_counters as a JSON object of its ten int64 fields by name ("seeds", ...,
/// "cache_misses"; counts and bytes as work_counters holds them), plus, when not empty, the
/// typed graphs' "rows_per_type" [T] and "edges_per_relation" [R] int64 arrays. Does not throw.
nlohmann::json work_counters_json(const work_counters& w);
/// The inverse of work_counters_json (the two arrays optional: empty when absent, as in
/// checkpoints written before they were saved). @throws io_error naming `file` and the field
/// that is missing or not an integer (array), or an array holding a negative count.
work_counters work_counters_of(const nlohmann::json& j, const std::filesystem::path& file);

/// Largest epoch a checkpoint may record (the command line's --epochs bound): a manifest beyond
/// it is damaged or edited, and epoch + 1 must stay far from INT_MAX.
inline constexpr std::int64_t kMaxCheckpointEpoch = 1000000000;
/// Largest batch or step count a checkpoint may record (batches per epoch, Adam steps): 2^50.
inline constexpr std::int64_t kMaxCheckpointCount = std::int64_t{1} << 50;

/// The integer `key` of manifest object `j`, required to lie in [lo, hi] (a JSON integer; floats,
/// strings and out-of-range values refused). `field` names it in messages ("position.epoch").
/// @throws io_error "MANIFEST: FIELD = V is impossible: not an integer in [LO, HI] ..." or,
///         when `key` is missing, "MANIFEST: the manifest has no 'KEY' ...".
std::int64_t manifest_int(const nlohmann::json& j, const char* key,
                          const std::filesystem::path& manifest, std::string_view field,
                          std::int64_t lo, std::int64_t hi);

/// Everything a checkpoint holds.
struct checkpoint {
  nlohmann::json identity = nlohmann::json::object();  ///< run_identity of the run
  epoch_position position;                             ///< where the run stands
  std::int64_t batches_per_epoch = 0;                  ///< of the run (checked on resume)
  trainer_state state;                                 ///< weights, Adam, embeddings
  nlohmann::json extra = nlohmann::json::object();     ///< tool-level state (totals so far,
                                                       ///< the selection: model_selector)
  /// --select-best val: the parameters [num_parameters] and embedding table [|V|, D] of the
  /// epoch selected so far (arrays selected_params and selected_embeddings); empty when the
  /// run holds none (and in checkpoints written before selection existed).
  std::vector<float> selected_params;
  matrix<float> selected_emb;
  std::filesystem::path path;  ///< read_checkpoint: the directory it was read from
};

/// The name of the sub-directory for position `p`: "ckpt-EEEEEE-BBBBBB" (epoch p.epoch, batches
/// done p.next_batch, each zero-padded to at least six digits). Does not throw.
std::string checkpoint_name(const epoch_position& p);

/// Writes `c` as a new checkpoint under `dir` (created when missing) and makes it the one
/// DIR/latest names, atomically (header comment); keeps the previous one, removes older ones and
/// stale temporaries. When the sub-directory for c.position already exists and is the latest,
/// nothing is written (a position decides the state). Host memory only; synchronous.
/// @returns the checkpoint's directory. @throws io_error naming the file that cannot be written.
std::filesystem::path write_checkpoint(const std::filesystem::path& dir, const checkpoint& c);

/// An exclusive advisory lock (flock(2), LOCK_EX | LOCK_NB) on DIR/.lock, held by the one run
/// that writes checkpoints into DIR for as long as the object lives; the kernel releases it when
/// the process ends in any way (SIGKILL included), so a stale lock file blocks nobody. The file
/// holds the holder's process id (for the message of a refused run) and is left in place.
class checkpoint_lock {
 public:
  /// Creates DIR (with its parents) when missing and takes the lock without waiting.
  /// @throws io_error "DIR: in use by another run (process N holds DIR/.lock) ..." when another
  ///         open file holds it (another process, or another lock object of this one);
  ///         io_error naming DIR or DIR/.lock when either cannot be created, opened or locked.
  explicit checkpoint_lock(const std::filesystem::path& dir);
  ~checkpoint_lock();
  checkpoint_lock(const checkpoint_lock&) = delete;
  checkpoint_lock& operator=(const checkpoint_lock&) = delete;

 private:
  int fd_ = -1;
};

/// What a checkpoint directory's newest checkpoint says about its run, from manifest.json alone
/// (no array is read): its identity and position, for refusing a directory that holds another
/// run's checkpoints.
struct checkpoint_summary {
  nlohmann::json identity = nlohmann::json::object();  ///< run_identity of the run
  epoch_position position;                             ///< epoch, batches done (loss, work)
  std::int64_t batches_per_epoch = 0;
  std::filesystem::path path;  ///< the checkpoint's directory (DIR/ckpt-...)
};

/// The summary of the checkpoint DIR/latest names (or of `dir` itself when it holds a
/// manifest.json); std::nullopt when `dir` holds neither (a missing `dir` included).
/// @throws io_error naming the file for an unreadable DIR/latest or manifest, as
///         read_checkpoint does (format, version, kind, keys, ranges).
std::optional<checkpoint_summary> peek_checkpoint(const std::filesystem::path& dir);

/// Reads the checkpoint DIR/latest names, or `dir` itself when it holds a manifest.json.
/// Every array's size and CRC-32 is checked against the manifest before it is parsed.
/// @throws io_error naming the file: no checkpoint there, a missing or unparsable manifest, a
///         wrong format or version, a missing key, a missing array, a size or checksum
///         mismatch ("the checkpoint is corrupt"), a dtype or shape that differs from the
///         manifest.
checkpoint read_checkpoint(const std::filesystem::path& dir);

/// A trained model as --save-model writes it and `embed` / `predict` / `score-pairs` read it.
struct saved_model {
  models::model_config config;
  std::vector<float> params;                           ///< [num_parameters] float32, params() order
  std::optional<matrix<float>> embeddings;             ///< [|V|, D] learnable input rows
  nlohmann::json identity = nlohmann::json::object();  ///< run_identity of the training run
  /// The tensors of params as the manifest lists them (name, rows, cols, offset into params);
  /// empty for a version 1 model, which has no names.
  std::vector<models::param_info> tensors;
};

/// Writes `m` to directory `dir` (created): model.npz with one float32 [rows, cols] array per
/// parameter tensor of the model m.config builds (params() order, sliced from m.params) and
/// "embeddings" [|V|, D] when m.embeddings is set, then manifest.json: format, version 2, kind
/// "model", the configuration, m.identity, "file" (model.npz with its byte size and CRC-32),
/// "transductive" (true with embeddings: the model holds one row per training vertex), and
/// "tensors": [{name, shape, dtype "float32", order "C", role "parameter" | "embedding"}] in
/// params() order (concatenated row-major, they are params), embeddings last. Each file is
/// replaced atomically, the manifest last. Host memory only; synchronous.
/// @throws io_error naming the file that cannot be written; logic_error when m.params does not
///         have the length m.config implies.
void write_saved_model(const std::filesystem::path& dir, const saved_model& m);

/// Reads a directory written by write_saved_model (version 2), or a version 1 model (params.npy
/// and embeddings.npy), checking sizes and checksums as read_checkpoint does (the tensors against
/// the configuration: build_saved_model).
/// @throws io_error naming the file for every problem: a missing directory or manifest ("not a
///         coopgnn model"), a bad checksum, a tensor missing from model.npz, or one whose shape
///         or dtype differs from the manifest's.
saved_model read_saved_model(const std::filesystem::path& dir);

/// The model `m` describes, built once in ctx's memory space with m.params as its parameters.
/// `what` names the source (the manifest) in messages.
/// @throws io_error "WHAT: N parameters, the model configuration has M" when m.params does not
///         have the length m.config implies, or "WHAT: tensor i is NAME [r, c], the model
///         configuration's is ..." when m.tensors differ from the model's parameters.
std::unique_ptr<models::gnn_model> build_saved_model(const saved_model& m, const exec_context& ctx,
                                                     const std::string& what);

}  // namespace coopgnn
