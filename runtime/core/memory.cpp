#include "runtime/core/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/core/cuda_context.hpp"

namespace coopgnn {

exec_context::exec_context(backend b, int pe, int threads)
    : backend_(b), pe_(pe), threads_(threads < 1 ? 1 : threads) {
  COOPGNN_EXPECTS(b != backend::cuda,
                  "exec_context: the CUDA backend needs a cuda_context (exec_context(cuda, "
                  "threads))");
}

exec_context::exec_context(const cuda::cuda_context& cuda, int threads)
    : backend_(backend::cuda), pe_(cuda.pe()), threads_(threads < 1 ? 1 : threads), cuda_(&cuda) {}

std::string_view to_string(memory_space s) { return s == memory_space::host ? "host" : "device"; }

std::string to_string(backend b) {
  switch (b) {
    case backend::cuda:
      return "cuda";
    case backend::emulated:
      return "emulated";
    case backend::host:
      break;
  }
  return "host";
}

void synchronize(const exec_context& ctx) {
#ifdef COOPGNN_WITH_CUDA
  if (ctx.cuda() != nullptr) cuda::detail::synchronize(ctx.cuda()->compute());
#else
  (void)ctx;
#endif
}

namespace detail {

void expect_space(const exec_context& ctx, memory_space s, const char* fn, const char* arg) {
  if (s == ctx.space()) [[likely]]
    return;
  COOPGNN_FAIL(
      "{}: {} is {} memory but the context computes in {} memory (backend {}); copy it "
      "with upload/download first",
      fn, arg, to_string(s), to_string(ctx.space()), to_string(ctx.get_backend()));
}

void expect_host(memory_space s, const char* what) {
  if (s == memory_space::host) [[likely]]
    return;
  COOPGNN_FAIL("{}: the data is device memory; download it to read it on the host", what);
}

raw_allocation allocate_device_bytes(const exec_context& ctx, std::size_t bytes) {
  COOPGNN_EXPECTS(ctx.space() == memory_space::device,
                  "allocate_device_bytes: a host context has no device memory");
  raw_allocation a;
  a.bytes = bytes;
  if (bytes == 0) return a;
  if (ctx.get_backend() == backend::emulated) {
    a.ptr = ::operator new(bytes);
    std::memset(a.ptr, 0xFF, bytes);  // poison: NaN floats, -1 integers
    return a;
  }
#ifdef COOPGNN_WITH_CUDA
  a.pool = ctx.cuda()->pool().shared_from_this();
  a.stream = ctx.cuda()->compute();
  a.ptr = a.pool->allocate(bytes, a.stream);
  return a;
#else
  COOPGNN_FAIL("allocate_device_bytes: this build has no CUDA backend");
#endif
}

void free_bytes(raw_allocation& a) noexcept {
  if (a.ptr == nullptr) return;
  if (a.pool != nullptr) {
    a.pool->deallocate(a.ptr, a.bytes, a.stream);
  } else {
    ::operator delete(a.ptr);
  }
  a = {};
}

void copy_bytes(const exec_context& ctx, void* dst, memory_space dst_space, const void* src,
                memory_space src_space, std::size_t bytes) {
  if (bytes == 0) return;
  COOPGNN_EXPECTS(dst != nullptr && src != nullptr, "copy: null pointer for {} bytes", bytes);
  if (ctx.runs_on_host()) {
    // The emulated device is plain heap memory: any direction is a memcpy; the point of the
    // emulation is that the caller had to ask for the copy.
    COOPGNN_EXPECTS(ctx.get_backend() == backend::emulated ||
                        (dst_space == memory_space::host && src_space == memory_space::host),
                    "copy: device memory on a host context");
    std::memmove(dst, src, bytes);
    return;
  }
#ifdef COOPGNN_WITH_CUDA
  auto const s = ctx.cuda()->compute();
  cuda::detail::copy_async(dst, src, bytes, s);
  if (dst_space == memory_space::host) cuda::detail::synchronize(s);
#else
  (void)dst_space;
  (void)src_space;
  COOPGNN_FAIL("copy: this build has no CUDA backend");
#endif
}

void zero_bytes(const exec_context& ctx, void* p, std::size_t bytes) {
  if (bytes == 0) return;
  if (ctx.runs_on_host()) {
    std::memset(p, 0, bytes);
    return;
  }
#ifdef COOPGNN_WITH_CUDA
  cuda::detail::zero_async(p, bytes, ctx.cuda()->compute());
#else
  COOPGNN_FAIL("fill_zero: this build has no CUDA backend");
#endif
}

}  // namespace detail
}  // namespace coopgnn
