// Feature storage tiers (docs/design.md section 9): where the full [|V|, F]
// float32 feature table of a run lives, and read access to its rows.
//
//   device  GPU memory of the PE's device (CUDA backend; fastest, smallest)
//   pinned  page-locked host memory that GPU kernels read in place over UVA (CUDA backend;
//           GraphBolt's default for features that do not fit on the GPU)
//   host    ordinary host memory (the dataset's in-memory matrix)
//   mmap    the dataset's .npy file mapped read-only; pages are read on demand by the OS, so a
//           table larger than RAM works
//
// choose_storage_tier picks by size unless a tier is forced (`--feature-storage`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

enum class storage_tier { device, pinned, host, mmap };

/// "device", "pinned", "host", "mmap".
std::string to_string(storage_tier t);

/// Parses a tier name; "auto" gives std::nullopt (choose by size).
/// @throws logic_error naming the value and the accepted names otherwise.
std::optional<storage_tier> parse_storage_tier(const std::string& name);

/// Memory the tiers may use for the feature table, in bytes.
struct storage_budget {
  std::int64_t device_bytes = 0;  ///< free device memory the table may take (0: no device)
  std::int64_t host_bytes = 0;    ///< host memory the table may take (in-memory or pinned)
};

/// The tier for a table of `table_bytes`:
///  - forced: that tier, after checking it exists on `b` (device and pinned need the CUDA
///    backend) and, for device, that the table fits in budget.device_bytes;
///  - auto, CUDA backend: device when it fits in budget.device_bytes, else pinned when it fits in
///    budget.host_bytes, else mmap;
///  - auto, host backend: host when the table is already in memory (`in_memory`) or fits in
///    budget.host_bytes, else mmap.
/// mmap needs a .npy file (`have_file`).
/// @throws logic_error naming `--feature-storage` when a forced tier is unavailable (device or
///   pinned on the host backend, device too small, mmap without a file) or when auto finds no
///   tier (the table fits nowhere and there is no file to map).
storage_tier choose_storage_tier(backend b, std::int64_t table_bytes, const storage_budget& budget,
                                 std::optional<storage_tier> forced, bool in_memory,
                                 bool have_file);

/// Half of the host's physical memory (sysconf), the default host budget; 0 when unknown.
std::int64_t default_host_budget_bytes();

/// A read-only [rows, cols] float32 feature table in one tier. Host-readable tiers (host, mmap,
/// pinned) expose row pointers; the device tier exposes only device_data(). Shared read-only by
/// the PEs; not copyable.
class feature_table {
 public:
  /// Borrows `m` (host tier); `m` must outlive the table.
  static std::unique_ptr<feature_table> borrow(const matrix<float>& m);

  /// Maps the .npy file `file` read-only (mmap tier). The file must hold a 2-D float32 array in
  /// C order ('<f4', fortran_order False), as `coopgnn convert` and DGL write features.
  /// @throws io_error naming the file when it cannot be opened or mapped, its header is invalid
  ///   (parse_npy_header), it is truncated, or it is not a 2-D C-ordered float32 array.
  static std::unique_ptr<feature_table> map_npy(const std::filesystem::path& file);

#ifdef COOPGNN_WITH_CUDA
  /// Copies `m` into device memory of the current device (device tier) or into page-locked,
  /// mapped host memory (pinned tier; GPU kernels read it over UVA).
  /// @throws cuda_error when the allocation or copy fails; logic_error for another tier.
  static std::unique_ptr<feature_table> upload(const matrix<float>& m, storage_tier tier);
#endif

  ~feature_table();
  feature_table(const feature_table&) = delete;
  feature_table& operator=(const feature_table&) = delete;

  [[nodiscard]] storage_tier tier() const { return tier_; }
  [[nodiscard]] std::int64_t rows() const { return rows_; }
  [[nodiscard]] std::int64_t cols() const { return cols_; }
  [[nodiscard]] std::int64_t bytes() const { return rows_ * cols_ * 4; }
  /// Row `v` ([cols] floats) for host-readable tiers; nullptr on the device tier. Unchecked.
  [[nodiscard]] const float* row(vid_t v) const { return host_ + v * cols_; }
  /// Whether row() may be used (every tier but device).
  [[nodiscard]] bool host_readable() const { return host_ != nullptr; }
  /// The table in device memory (device tier) or its device alias (pinned); nullptr otherwise.
  [[nodiscard]] const float* device_data() const { return device_; }

  /// Gathers rows `ids` into an [m, cols] host matrix (host-readable tiers).
  /// @throws logic_error naming the first id outside [0, rows), or on the device tier.
  [[nodiscard]] matrix<float> gather(std::span<const vid_t> ids) const;

 private:
  feature_table() = default;
  storage_tier tier_ = storage_tier::host;
  std::int64_t rows_ = 0, cols_ = 0;
  const float* host_ = nullptr;
  const float* device_ = nullptr;
  void* mapping_ = nullptr;  // mmap base (mmap tier)
  std::size_t mapping_bytes_ = 0;
  void* owned_ = nullptr;  // cudaMalloc / cudaHostAlloc allocation (device, pinned)
};

}  // namespace coopgnn
