#include "cache/storage.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "kernels/gather/gather.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"

#ifdef COOPGNN_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace coopgnn {

std::string to_string(storage_tier t) {
  switch (t) {
    case storage_tier::device: return "device";
    case storage_tier::pinned: return "pinned";
    case storage_tier::host: return "host";
    case storage_tier::mmap: return "mmap";
  }
  return "?";
}

std::optional<storage_tier> parse_storage_tier(const std::string& name) {
  if (name == "auto") return std::nullopt;
  for (auto t : {storage_tier::device, storage_tier::pinned, storage_tier::host, storage_tier::mmap}) {
    if (name == to_string(t)) return t;
  }
  COOPGNN_FAIL("--feature-storage: unknown tier '{}' (expected auto, device, pinned, host, mmap)",
               name);
}

storage_tier choose_storage_tier(backend b, std::int64_t table_bytes, const storage_budget& budget,
                                 std::optional<storage_tier> forced, bool in_memory,
                                 bool have_file) {
  bool const cuda = b == backend::cuda;
  if (forced) {
    auto const t = *forced;
    COOPGNN_EXPECTS(cuda || (t != storage_tier::device && t != storage_tier::pinned),
                    "--feature-storage {}: the device and pinned tiers serve GPU kernels and need "
                    "the CUDA backend; this run uses the host backend (use host or mmap)",
                    to_string(t));
    COOPGNN_EXPECTS(t != storage_tier::device || table_bytes <= budget.device_bytes,
                    "--feature-storage device: the feature table ({} bytes) does not fit in the "
                    "{} bytes of device memory available; use pinned or mmap",
                    table_bytes, budget.device_bytes);
    COOPGNN_EXPECTS(t != storage_tier::mmap || have_file,
                    "--feature-storage mmap: the dataset's features do not come from a .npy file");
    return t;
  }
  if (cuda) {
    if (table_bytes <= budget.device_bytes) return storage_tier::device;
    if (table_bytes <= budget.host_bytes) return storage_tier::pinned;
  } else if (in_memory || table_bytes <= budget.host_bytes) {
    return storage_tier::host;
  }
  COOPGNN_EXPECTS(have_file,
                  "--feature-storage auto: the feature table ({} bytes) fits in no memory tier "
                  "and there is no .npy file to map",
                  table_bytes);
  return storage_tier::mmap;
}

std::int64_t default_host_budget_bytes() {
  long const pages = sysconf(_SC_PHYS_PAGES);
  long const page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::int64_t>(pages) * page / 2;
}

std::unique_ptr<feature_table> feature_table::borrow(const matrix<float>& m) {
  std::unique_ptr<feature_table> t(new feature_table());
  t->tier_ = storage_tier::host;
  t->rows_ = m.rows();
  t->cols_ = m.cols();
  t->host_ = m.size() > 0 ? m.row(0) : nullptr;
  return t;
}

std::unique_ptr<feature_table> feature_table::borrow(const matrix<std::uint16_t>& bits,
                                                     feature_dtype dtype) {
  COOPGNN_EXPECTS(dtype != feature_dtype::float32,
                  "feature_table::borrow: 16-bit patterns cannot be a float32 table");
  std::unique_ptr<feature_table> t(new feature_table());
  t->tier_ = storage_tier::host;
  t->dtype_ = dtype;
  t->rows_ = bits.rows();
  t->cols_ = bits.cols();
  t->host_ = bits.size() > 0 ? bits.row(0) : nullptr;
  return t;
}

std::unique_ptr<feature_table> feature_table::map_npy(const std::filesystem::path& file) {
  auto const h = read_npy_header(file);  // checks the size against the shape
  bool const half = h.dtype == npy_dtype::float16;
  if ((h.dtype != npy_dtype::float32 && !half) || h.fortran_order || h.shape.size() != 2) {
    COOPGNN_IO_FAIL(
        "{}: cannot memory-map as features: need a 2-D C-ordered float32 or float16 array, "
        "found {} {}{}",
        file.string(), npy_dtype_name(h.dtype), format_npy_shape(h.shape),
        h.fortran_order ? " in Fortran order" : "");
  }
  std::size_t const elem = half ? 2 : 4;
  if (h.data_offset % elem != 0) {
    COOPGNN_IO_FAIL("{}: the data starts at byte {}, not a multiple of {}", file.string(),
                    h.data_offset, elem);
  }
  int const fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) COOPGNN_IO_FAIL("{}: cannot open: {}", file.string(), std::strerror(errno));
  auto const bytes = h.data_offset + static_cast<std::size_t>(h.data_bytes());
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  int const err = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    COOPGNN_IO_FAIL("{}: cannot mmap {} bytes: {}", file.string(), bytes, std::strerror(err));
  }
  std::unique_ptr<feature_table> t(new feature_table());
  t->tier_ = storage_tier::mmap;
  t->dtype_ = half ? feature_dtype::float16 : feature_dtype::float32;
  t->rows_ = h.shape[0];
  t->cols_ = h.shape[1];
  t->mapping_ = base;
  t->mapping_bytes_ = bytes;
  t->host_ = static_cast<const std::byte*>(base) + h.data_offset;
  return t;
}

#ifdef COOPGNN_WITH_CUDA
namespace {
void check_cuda(cudaError_t e, const char* what, std::int64_t bytes) {
  if (e != cudaSuccess) {
    // A failed allocation (not sticky) stays the thread's last error: clear it, so that a caller
    // that handles this error does not see it again at its next checked kernel launch.
    (void)cudaGetLastError();
    throw cuda_error(fmt::format("feature_table::upload: {} of {} bytes failed: {}", what, bytes,
                                 cudaGetErrorString(e)));
  }
}
}  // namespace

std::unique_ptr<feature_table> feature_table::upload(const feature_table& src, storage_tier tier) {
  COOPGNN_EXPECTS(tier == storage_tier::device || tier == storage_tier::pinned,
                  "feature_table::upload: tier {} is not a CUDA tier", to_string(tier));
  COOPGNN_EXPECTS(src.host_readable() || src.bytes() == 0,
                  "feature_table::upload: the source ({} tier) is not readable by the host",
                  to_string(src.tier()));
  std::unique_ptr<feature_table> t(new feature_table());
  t->tier_ = tier;
  t->dtype_ = src.dtype();
  t->rows_ = src.rows();
  t->cols_ = src.cols();
  auto const bytes = t->bytes();
  if (bytes == 0) return t;
  if (tier == storage_tier::device) {
    check_cuda(cudaMalloc(&t->owned_, static_cast<std::size_t>(bytes)), "cudaMalloc", bytes);
    check_cuda(cudaMemcpy(t->owned_, src.host_data(), static_cast<std::size_t>(bytes),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy", bytes);
    // From pageable memory cudaMemcpy may return before the DMA lands; the PEs' streams are
    // non-blocking, so finish it here before any kernel reads the table.
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", bytes);
    t->device_ = t->owned_;
  } else {
    // Portable: pinned and mapped for every device, so PEs on several GPUs read it over UVA.
    check_cuda(cudaHostAlloc(&t->owned_, static_cast<std::size_t>(bytes),
                             cudaHostAllocMapped | cudaHostAllocPortable),
               "cudaHostAlloc", bytes);
    std::memcpy(t->owned_, src.host_data(), static_cast<std::size_t>(bytes));
    void* alias = nullptr;
    check_cuda(cudaHostGetDevicePointer(&alias, t->owned_, 0), "cudaHostGetDevicePointer", bytes);
    t->host_ = t->owned_;
    t->device_ = alias;
  }
  return t;
}

#endif

feature_table::~feature_table() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
#ifdef COOPGNN_WITH_CUDA
  if (owned_ != nullptr) {
    // Errors cannot be reported from a destructor; a failed free leaks, which is all it can do.
    if (tier_ == storage_tier::pinned) {
      (void)cudaFreeHost(owned_);
    } else {
      (void)cudaFree(owned_);
    }
  }
#endif
}

matrix<float> feature_rows_float32(const dataset& ds) {
  if (ds.features_in_memory() && !ds.features_are_16bit()) return ds.features;
  COOPGNN_EXPECTS(ds.features_in_memory() || !ds.feature_file.empty(),
                  "dataset '{}' has no node features", ds.name);
  auto const table = ds.features_in_memory() ? feature_table::borrow(ds.features16, ds.feature_type)
                                             : feature_table::map_npy(ds.feature_file);
  std::vector<vid_t> all(static_cast<std::size_t>(table->rows()));
  std::iota(all.begin(), all.end(), vid_t{0});
  return table->gather(all);
}

matrix<float> feature_table::gather(std::span<const vid_t> ids) const {
  COOPGNN_EXPECTS(host_readable() || rows_ * cols_ == 0,
                  "feature_table::gather: the {} tier is not readable by the host",
                  to_string(tier_));
  return gather_rows(host_, dtype_, rows_, cols_, ids);
}

}  // namespace coopgnn
