// Memory that knows where it lives (docs/design.md section 2): owning buffers and
// row-major tensors in the memory space of a PE's execution context, their non-owning views, and
// the explicit copies between spaces.
//
//   host     ordinary host memory (zero-filled when allocated, unless asked for with no_init),
//            the host backend's space;
//   device   the memory of the PE's device: a CUDA device (stream-ordered from the context's
//            pool, uninitialised), or the emulated device of backend::emulated (separate heap
//            allocations filled with 0xFF bytes when allocated: NaN floats, -1 integers, so a
//            kernel that reads memory nobody wrote shows it on CI).
//
// Views carry their space; kernel entries check every operand against the context
// (expect_space) and throw logic_error on a mismatch, never copy silently. Host code reads a
// buffer's elements only through host(), which throws for device memory: data crosses between
// spaces only through upload / download / copy / to_space. (Patterned after RMM's
// device_uvector and RAFT's mdarray with a memory type; GraphBolt's ops dispatch on where their
// operands live.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/matrix.hpp"

namespace coopgnn {

/// "host" or "device".
std::string_view to_string(memory_space s);

namespace detail {

/// One allocation outside std::vector: emulated or CUDA device memory.
struct raw_allocation {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  /// CUDA memory: the PE's pool (shared ownership), which frees it stream-ordered on `stream`;
  /// null for the emulated device's heap blocks.
  std::shared_ptr<const cuda::device_pool> pool;
  cuda::stream_t stream = nullptr;
};

/// `bytes` of device memory for ctx (ctx.space() must be device): emulated: a heap block filled
/// with 0xFF; cuda: from ctx.cuda()->pool() on its compute stream. 0 bytes gives a null pointer.
/// @throws logic_error for a host context; cuda_error when the pool is exhausted.
raw_allocation allocate_device_bytes(const exec_context& ctx, std::size_t bytes);
/// Releases `a` (no-op when empty). Never throws.
void free_bytes(raw_allocation& a) noexcept;
/// Copies `bytes` from src (in src_space) to dst (in dst_space) under ctx. Host-only contexts
/// (host, emulated) memcpy. CUDA: cudaMemcpyAsync on the compute stream; when dst is host memory
/// the stream is synchronised before returning (the bytes are readable); a pageable host source
/// is staged by the driver before the call returns, but a pinned or registered host source is
/// read asynchronously: keep it alive and unchanged until the stream reaches the copy.
/// @throws cuda_error.
void copy_bytes(const exec_context& ctx, void* dst, memory_space dst_space, const void* src,
                memory_space src_space, std::size_t bytes);
/// Sets `bytes` at p (in ctx.space()) to zero: memset, or cudaMemsetAsync on the compute stream.
void zero_bytes(const exec_context& ctx, void* p, std::size_t bytes);

/// Throws logic_error "<fn>: <arg> is <space> memory but the context computes in <space>
/// memory (backend <b>)" unless `s` is ctx.space().
void expect_space(const exec_context& ctx, memory_space s, const char* fn, const char* arg);
/// Throws logic_error "<what> is device memory; download it to read it on the host" unless `s`
/// is host.
void expect_host(memory_space s, const char* what);

}  // namespace detail

/// A non-owning view of `size` elements of T at `data`, in memory space `space`.
template <class T>
struct buffer_view {
  T* data = nullptr;
  std::size_t size = 0;
  memory_space space = memory_space::host;

  [[nodiscard]] std::size_t bytes() const { return size * sizeof(T); }
  [[nodiscard]] bool empty() const { return size == 0; }
  /// The elements as a host span. @throws logic_error for device memory.
  [[nodiscard]] std::span<T> host() const {
    detail::expect_host(space, "buffer_view::host()");
    return {data, size};
  }
  /// Elements [offset, offset + count). @throws logic_error when out of range.
  [[nodiscard]] buffer_view sub(std::size_t offset, std::size_t count) const {
    COOPGNN_EXPECTS(offset <= size && count <= size - offset,
                    "buffer_view::sub: [{}, {}) is outside [0, {})", offset, offset + count, size);
    return {data + offset, count, space};
  }
  operator buffer_view<const T>() const  // NOLINT(google-explicit-constructor)
      requires(!std::is_const_v<T>) {
    return {data, size, space};
  }
};

/// A view of a host span.
template <class T>
buffer_view<T> host_view(std::span<T> s) {
  return {s.data(), s.size(), memory_space::host};
}
template <class T>
buffer_view<const T> host_view(const std::vector<T>& v) {
  return {v.data(), v.size(), memory_space::host};
}
template <class T>
buffer_view<T> host_view(std::vector<T>& v) {
  return {v.data(), v.size(), memory_space::host};
}

/// Tag of the buffer / tensor constructors that leave host storage unwritten: for outputs that
/// the caller overwrites in full right away (a 10 MB zero fill costs as much as the kernel
/// that then writes it). Device memory is never initialised anyway.
struct no_init_t {
  explicit no_init_t() = default;
};
inline constexpr no_init_t no_init{};

/// Move-only owner of `size()` elements of T (trivially copyable) in one memory space.
/// Host buffers are zero-filled std::vector storage (adopt/release_host move it in and out
/// without a copy), or unwritten heap storage when made with `no_init` (filled with 0xFF bytes
/// in builds without NDEBUG, like the emulated device, so a read of an element nobody wrote
/// shows in the debug tests); device buffers come from the context (see the file comment) and
/// must be destroyed while their context's resources are alive.
template <class T>
class buffer {
  static_assert(std::is_trivially_copyable_v<T>, "buffer<T> needs a trivially copyable T");

 public:
  buffer() = default;
  /// n elements in ctx.space(). @throws cuda_error when the device pool is exhausted.
  buffer(const exec_context& ctx, std::size_t n) : size_(n), space_(ctx.space()) {
    if (space_ == memory_space::host) {
      host_.assign(n, T{});
      data_ = host_.data();
    } else {
      raw_ = detail::allocate_device_bytes(ctx, n * sizeof(T));
      data_ = static_cast<T*>(raw_.ptr);
    }
  }
  /// n elements in ctx.space() whose values are unspecified until written (see no_init_t).
  /// @throws cuda_error when the device pool is exhausted; std::bad_alloc on the host.
  buffer(const exec_context& ctx, std::size_t n, no_init_t) : size_(n), space_(ctx.space()) {
    if (space_ == memory_space::host) {
      if (n == 0) return;
      host_unset_ = std::make_unique_for_overwrite<T[]>(n);
      data_ = host_unset_.get();
#ifndef NDEBUG
      std::memset(static_cast<void*>(data_), 0xFF, n * sizeof(T));
#endif
    } else {
      raw_ = detail::allocate_device_bytes(ctx, n * sizeof(T));
      data_ = static_cast<T*>(raw_.ptr);
    }
  }
  /// A host buffer taking over `v`'s storage (no copy).
  static buffer adopt(std::vector<T>&& v) {
    buffer b;
    b.host_ = std::move(v);
    b.data_ = b.host_.data();
    b.size_ = b.host_.size();
    b.space_ = memory_space::host;
    return b;
  }
  /// A device buffer taking over a cuda::device_buffer (CUDA backend; no copy).
  static buffer adopt(cuda::device_buffer<T>&& d) {
    buffer b;
    b.size_ = d.size();
    b.space_ = memory_space::device;
    b.raw_.stream = d.stream();
    b.raw_.pool = d.pool();
    b.raw_.bytes = d.bytes();
    b.raw_.ptr = d.release();
    b.data_ = static_cast<T*>(b.raw_.ptr);
    return b;
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&& o) noexcept { *this = std::move(o); }
  buffer& operator=(buffer&& o) noexcept {
    if (this != &o) {
      detail::free_bytes(raw_);
      host_ = std::move(o.host_);
      host_unset_ = std::move(o.host_unset_);
      raw_ = std::exchange(o.raw_, {});
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      space_ = o.space_;
    }
    return *this;
  }
  ~buffer() { detail::free_bytes(raw_); }

  [[nodiscard]] T* data() { return data_; }
  [[nodiscard]] const T* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t bytes() const { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] memory_space space() const { return space_; }
  [[nodiscard]] buffer_view<T> view() { return {data_, size_, space_}; }
  [[nodiscard]] buffer_view<const T> view() const { return {data_, size_, space_}; }
  /// Host access. @throws logic_error for device memory.
  [[nodiscard]] std::span<T> host() { return view().host(); }
  [[nodiscard]] std::span<const T> host() const { return view().host(); }
  /// The host storage, moved out (no copy; a copy for a `no_init` buffer); the buffer is left
  /// empty. @throws logic_error for device memory.
  [[nodiscard]] std::vector<T> release_host() && {
    detail::expect_host(space_, "buffer::release_host()");
    std::vector<T> out = host_unset_ ? std::vector<T>(data_, data_ + size_) : std::move(host_);
    host_unset_.reset();
    data_ = nullptr;
    size_ = 0;
    return out;
  }

 private:
  std::vector<T> host_;
  std::unique_ptr<T[]> host_unset_;  ///< host storage of a no_init buffer
  detail::raw_allocation raw_;
  T* data_ = nullptr;
  std::size_t size_ = 0;
  memory_space space_ = memory_space::host;
};

/// A non-owning view of a row-major [rows, cols] matrix (row stride = cols) in `space`.
template <class T>
struct tensor_view {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  memory_space space = memory_space::host;

  [[nodiscard]] std::int64_t size() const { return rows * cols; }
  [[nodiscard]] std::size_t bytes() const { return static_cast<std::size_t>(size()) * sizeof(T); }
  /// Rows [0, n). @throws logic_error when n > rows or n < 0.
  [[nodiscard]] tensor_view first_rows(std::int64_t n) const {
    COOPGNN_EXPECTS(0 <= n && n <= rows, "tensor_view::first_rows: {} of {} rows", n, rows);
    return {data, n, cols, space};
  }
  /// The elements as one flat view.
  [[nodiscard]] buffer_view<T> flat() const {
    return {data, static_cast<std::size_t>(size()), space};
  }
  /// Row i as host memory. @throws logic_error for device memory (rows are not range-checked).
  [[nodiscard]] T* host_row(std::int64_t i) const {
    detail::expect_host(space, "tensor_view::host_row()");
    return data + i * cols;
  }
  operator tensor_view<const T>() const  // NOLINT(google-explicit-constructor)
      requires(!std::is_const_v<T>) {
    return {data, rows, cols, space};
  }
};

/// Views of host matrices.
template <class T>
tensor_view<T> host_view(matrix<T>& m) {
  return {m.data(), m.rows(), m.cols(), memory_space::host};
}
template <class T>
tensor_view<const T> host_view(const matrix<T>& m) {
  return {m.data(), m.rows(), m.cols(), memory_space::host};
}

/// Move-only owner of a row-major [rows, cols] matrix of T in one memory space (a buffer with a
/// shape). Host tensors are zero-filled (unless made with no_init); device tensors as buffer.
template <class T>
class tensor {
 public:
  tensor() = default;
  /// @throws logic_error for a negative shape; cuda_error when the pool is exhausted.
  tensor(const exec_context& ctx, std::int64_t rows, std::int64_t cols)
      : buf_(ctx, checked_size(rows, cols)), rows_(rows), cols_(cols) {}
  /// Values unspecified until written (see no_init_t). @throws as above.
  tensor(const exec_context& ctx, std::int64_t rows, std::int64_t cols, no_init_t)
      : buf_(ctx, checked_size(rows, cols), no_init), rows_(rows), cols_(cols) {}
  /// A tensor over `b` (b.size() == rows * cols). @throws logic_error otherwise.
  tensor(buffer<T>&& b, std::int64_t rows, std::int64_t cols)
      : buf_(std::move(b)), rows_(rows), cols_(cols) {
    COOPGNN_EXPECTS(rows >= 0 && cols >= 0 && static_cast<std::int64_t>(buf_.size()) == rows * cols,
                    "tensor: buffer of {} elements for shape [{}, {}]", buf_.size(), rows, cols);
  }
  /// A host tensor taking over `m`'s storage (no copy).
  static tensor adopt(matrix<T>&& m) {
    auto const r = m.rows(), c = m.cols();
    return tensor(buffer<T>::adopt(std::move(m.values())), r, c);
  }
  /// The host storage as a matrix (no copy); the tensor is left empty.
  /// @throws logic_error for device memory.
  [[nodiscard]] matrix<T> release_host() && {
    auto const r = rows_, c = cols_;
    rows_ = cols_ = 0;
    return matrix<T>(r, c, std::move(buf_).release_host());
  }

  [[nodiscard]] std::int64_t rows() const { return rows_; }
  [[nodiscard]] std::int64_t cols() const { return cols_; }
  [[nodiscard]] std::int64_t size() const { return rows_ * cols_; }
  [[nodiscard]] std::size_t bytes() const { return buf_.bytes(); }
  [[nodiscard]] memory_space space() const { return buf_.space(); }
  [[nodiscard]] T* data() { return buf_.data(); }
  [[nodiscard]] const T* data() const { return buf_.data(); }
  [[nodiscard]] tensor_view<T> view() { return {buf_.data(), rows_, cols_, buf_.space()}; }
  [[nodiscard]] tensor_view<const T> view() const {
    return {buf_.data(), rows_, cols_, buf_.space()};
  }
  [[nodiscard]] buffer<T>& storage() { return buf_; }
  [[nodiscard]] const buffer<T>& storage() const { return buf_; }

 private:
  static std::size_t checked_size(std::int64_t rows, std::int64_t cols) {
    COOPGNN_EXPECTS(rows >= 0 && cols >= 0, "tensor shape [{}, {}] is negative", rows, cols);
    return static_cast<std::size_t>(rows * cols);
  }
  buffer<T> buf_;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
};

/// A [rows, cols] tensor of zeros in ctx.space() (host tensors are born zero; device ones are
/// cleared on the compute stream).
template <class T>
tensor<T> zeros(const exec_context& ctx, std::int64_t rows, std::int64_t cols) {
  tensor<T> t(ctx, rows, cols);
  if (t.space() == memory_space::device) detail::zero_bytes(ctx, t.data(), t.bytes());
  return t;
}

/// Blocks until the work enqueued under ctx has finished: the compute stream on the CUDA backend
/// (throws cuda_error carrying an asynchronous fault); nothing to wait for on the host and
/// emulated backends.
void synchronize(const exec_context& ctx);

// ---- copies between spaces --------------------------------------------------------------------

/// dst = src element by element (equal sizes), across any spaces, under ctx (see
/// detail::copy_bytes for when it synchronises). @throws logic_error on a size mismatch.
template <class T>
void copy(const exec_context& ctx, buffer_view<T> dst, buffer_view<const T> src) {
  COOPGNN_EXPECTS(dst.size == src.size, "copy: destination has {} elements, source {}", dst.size,
                  src.size);
  detail::copy_bytes(ctx, dst.data, dst.space, src.data, src.space, src.bytes());
}

/// Sets every element of `dst` (in ctx.space()) to zero bits.
template <class T>
void fill_zero(const exec_context& ctx, buffer_view<T> dst) {
  detail::expect_space(ctx, dst.space, "fill_zero", "dst");
  detail::zero_bytes(ctx, dst.data, dst.bytes());
}

/// A copy of host data in ctx.space().
template <class T>
buffer<T> upload(const exec_context& ctx, std::span<const T> host) {
  buffer<T> b(ctx, host.size());
  copy<T>(ctx, b.view(), buffer_view<const T>{host.data(), host.size(), memory_space::host});
  return b;
}
template <class T>
tensor<T> upload(const exec_context& ctx, const matrix<T>& m) {
  tensor<T> t(ctx, m.rows(), m.cols());
  copy<T>(ctx, t.view().flat(), host_view(m).flat());
  return t;
}

/// Host data moved into ctx.space(): adopted without a copy on the host backend, uploaded
/// otherwise.
template <class T>
buffer<T> to_space(const exec_context& ctx, std::vector<T>&& host) {
  if (ctx.space() == memory_space::host) return buffer<T>::adopt(std::move(host));
  return upload<T>(ctx, std::span<const T>(host));
}
template <class T>
tensor<T> to_space(const exec_context& ctx, matrix<T>&& m) {
  if (ctx.space() == memory_space::host) return tensor<T>::adopt(std::move(m));
  return upload<T>(ctx, m);
}

/// A copy of `src` in ctx.space() (src may be in any space).
template <class T>
buffer<T> clone(const exec_context& ctx, buffer_view<const T> src) {
  buffer<T> out(ctx, src.size);
  copy<T>(ctx, out.view(), src);
  return out;
}

/// The elements of `b` on the host: its storage moved out when `b` is host memory (no copy),
/// a download otherwise.
template <class T>
std::vector<T> to_host(const exec_context& ctx, buffer<T>&& b);
template <class T>
matrix<T> to_host(const exec_context& ctx, tensor<T>&& t);

/// A host copy of `src` (synchronises ctx's compute stream on the CUDA backend).
template <class T>
std::vector<T> download(const exec_context& ctx, buffer_view<const T> src) {
  std::vector<T> out(src.size);
  copy<T>(ctx, host_view(out), src);
  return out;
}
/// The elements of `src` readable on the host: `src` itself when it is host memory (no copy),
/// else a download into `storage` (synchronises). The span lives as long as src and storage.
template <class T>
std::span<const T> host_readable(const exec_context& ctx, buffer_view<const T> src,
                                 std::vector<T>& storage) {
  if (src.space == memory_space::host) return {src.data, src.size};
  storage = download<T>(ctx, src);
  return storage;
}
template <class T>
std::vector<T> to_host(const exec_context& ctx, buffer<T>&& b) {
  if (b.space() == memory_space::host) return std::move(b).release_host();
  return download<T>(ctx, b.view());
}
template <class T>
matrix<T> download(const exec_context& ctx, tensor_view<const T> src) {
  matrix<T> out(src.rows, src.cols);
  copy<T>(ctx, host_view(out).flat(), src.flat());
  return out;
}
template <class T>
matrix<T> to_host(const exec_context& ctx, tensor<T>&& t) {
  if (t.space() == memory_space::host) return std::move(t).release_host();
  return download<T>(ctx, t.view());
}

}  // namespace coopgnn
