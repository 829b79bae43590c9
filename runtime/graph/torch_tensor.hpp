// TEMPORARY STUB (not committed): replaced by the torch-format branch.
#pragma once
#include <filesystem>
#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
namespace coopgnn {
struct torch_tensor_header { npy_dtype dtype = npy_dtype::float32; std::vector<std::int64_t> shape; };
inline torch_tensor_header read_torch_header(const std::filesystem::path& f) { COOPGNN_IO_FAIL("{}: torch stub", f.string()); }
template <typename T> npy_array<T> read_torch(const std::filesystem::path& f) { COOPGNN_IO_FAIL("{}: torch stub", f.string()); }
}
