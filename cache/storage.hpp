// Feature storage tiers (docs/design.md section 9): where the full [|V|, F] feature table of a
// run lives, and read access to its rows. The table keeps its stored element type in every tier
// (float32, or float16 / bfloat16 at 2 bytes per element: runtime/core/half.hpp); gathers widen
// the rows they read to float32.
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

#include "runtime/core/half.hpp"
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

/// A read-only [rows, cols] feature table in one tier, at its stored element type dtype()
/// (float32: 4 bytes per element; float16, bfloat16: 2, their bit patterns). Host-readable tiers
/// (host, mmap, pinned) expose host_data(); the device tier exposes only device_data(). Shared
/// read-only by the PEs; not copyable.
class feature_table {
 public:
  /// Borrows `m` (host tier, float32); `m` must outlive the table.
  static std::unique_ptr<feature_table> borrow(const matrix<float>& m);
  /// Borrows the 16-bit patterns `bits` ([rows, cols], host tier) as a table of `dtype`
  /// (float16 or bfloat16); `bits` must outlive the table.
  /// @throws logic_error for dtype float32.
  static std::unique_ptr<feature_table> borrow(const matrix<std::uint16_t>& bits,
                                               feature_dtype dtype);

  /// Maps the .npy file `file` read-only (mmap tier). The file must hold a 2-D float32 ('<f4')
  /// or float16 ('<f2', then dtype() float16, 2 bytes per element) array in C order
  /// (fortran_order False), as `coopgnn convert`, numpy and DGL write features.
  /// @throws io_error naming the file when it cannot be opened or mapped, its header is invalid
  ///   (parse_npy_header), it is truncated, or it is not a 2-D C-ordered float32 or float16
  ///   array.
  static std::unique_ptr<feature_table> map_npy(const std::filesystem::path& file);

#ifdef COOPGNN_WITH_CUDA
  /// Copies the host-readable table `src` (host, mmap or pinned tier), bytes unchanged and at
  /// its element type, into device memory of the current device (device tier: bytes() of device
  /// memory) or into page-locked, mapped host memory (pinned tier; GPU kernels read it over
  /// UVA).
  /// @throws cuda_error when the allocation or copy fails; logic_error for another tier or a
  ///   `src` the host cannot read.
  static std::unique_ptr<feature_table> upload(const feature_table& src, storage_tier tier);
#endif

  ~feature_table();
  feature_table(const feature_table&) = delete;
  feature_table& operator=(const feature_table&) = delete;

  [[nodiscard]] storage_tier tier() const { return tier_; }
  /// The element type as stored (and as read by every gather before widening).
  [[nodiscard]] feature_dtype dtype() const { return dtype_; }
  [[nodiscard]] std::int64_t rows() const { return rows_; }
  [[nodiscard]] std::int64_t cols() const { return cols_; }
  /// Bytes of one row as stored: cols * feature_dtype_size(dtype()).
  [[nodiscard]] std::int64_t row_bytes() const { return cols_ * feature_dtype_size(dtype_); }
  /// Bytes of the whole table as stored: rows * row_bytes().
  [[nodiscard]] std::int64_t bytes() const { return rows_ * row_bytes(); }
  /// Row 0 of a host-readable tier ([rows, cols] elements of dtype(), row-major, unpadded);
  /// nullptr on the device tier (and for an empty table).
  [[nodiscard]] const void* host_data() const { return host_; }
  /// Whether host_data() may be read (every tier but device).
  [[nodiscard]] bool host_readable() const { return host_ != nullptr; }
  /// The table in device memory (device tier) or its device alias (pinned), elements of
  /// dtype(); nullptr otherwise.
  [[nodiscard]] const void* device_data() const { return device_; }

  /// Gathers rows `ids` ([m] in [0, rows)) of a host-readable tier into an [m, cols] float32
  /// host matrix, widening 16-bit elements exactly (gather_rows, kernels/gather/gather.hpp).
  /// @throws logic_error naming the first id outside [0, rows), or on the device tier.
  [[nodiscard]] matrix<float> gather(std::span<const vid_t> ids) const;

 private:
  feature_table() = default;
  storage_tier tier_ = storage_tier::host;
  feature_dtype dtype_ = feature_dtype::float32;
  std::int64_t rows_ = 0, cols_ = 0;
  const void* host_ = nullptr;
  const void* device_ = nullptr;
  void* mapping_ = nullptr;  // mmap base (mmap tier)
  std::size_t mapping_bytes_ = 0;
  void* owned_ = nullptr;  // cudaMalloc / cudaHostAlloc allocation (device, pinned)
};

struct dataset;  // runtime/graph/dataset.hpp

/// Every input feature row of `ds` as a float32 [num_nodes, F] host matrix, for layer-wise
/// full-neighbour inference (which reads every row): a copy of ds.features, the 16-bit table
/// ds.features16 widened exactly (feature_table::gather), or the rows of ds.feature_file (float32
/// or float16) mapped and gathered. The copy exists while the caller holds it; the dataset's
/// own table keeps its width. Host memory: num_nodes * F * 4 bytes.
/// @throws logic_error when ds has no input features (F = 0 and no file); io_error from
///   feature_table::map_npy.
matrix<float> feature_rows_float32(const dataset& ds);

}  // namespace coopgnn
