// PyTorch tensors written by torch.save (docs/design.md section 3.1: a GraphBolt OnDiskDataset's
// metadata.yaml may give an array `format: torch`).
//
// Format (torch/serialization.py `_save`, PyTorch >= 1.6): a zip archive of stored (uncompressed)
// members under one top-level folder <archive> chosen at save time:
//   <archive>/data.pkl          pickle (protocol 2) of the saved object
//   <archive>/data/<key>        raw bytes of storage <key>, little-endian, numel * element size
//   <archive>/byteorder         "little" or "big" (absent in older files: little)
//   <archive>/version, <archive>/.data/serialization_id, ...
// A tensor pickles as torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride,
// requires_grad, backward_hooks[, metadata]) where storage is the persistent id
// ('storage', torch.<Type>Storage, key, location, numel) (numel in elements of the storage type),
// and the tensor is the view element[i0, i1, ...] = storage[storage_offset + sum_d i_d*stride_d].
// Only a file holding exactly one tensor is read; the pickle is interpreted by a small stack
// machine that knows the opcodes such a file uses and nothing else, and runs no Python code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/graph/npy.hpp"

namespace coopgnn {

/// Header of a torch.save'd tensor: dtype, shape, and where its elements are.
struct torch_tensor_header {
  npy_dtype dtype = npy_dtype::float32;  ///< element type of the storage (torch.FloatStorage ->
                                         ///< float32, LongStorage -> int64, BoolStorage -> bool,
                                         ///< HalfStorage -> float16, BFloat16Storage -> bfloat16)
  std::vector<std::int64_t> shape;       ///< tensor size, outermost first; () for a 0-d tensor
  std::vector<std::int64_t> strides;     ///< in elements, one per dimension, each >= 0
  std::int64_t storage_offset = 0;       ///< elements from the storage start to element [0, ...]
  std::int64_t storage_numel = 0;        ///< elements in the storage record
  std::string storage_record;            ///< zip member holding the storage, "<archive>/data/<key>"
  std::uint64_t storage_bytes = 0;       ///< size of that member (= storage_numel * element size)
  std::string location;                  ///< device the tensor was saved from ("cpu", "cuda:0")
  bool requires_grad = false;

  /// Product of `shape` (1 for a 0-d tensor; 0 when any extent is 0), saturating at INT64_MAX
  /// when the product overflows. Never throws.
  [[nodiscard]] std::int64_t num_elements() const;
  /// Whether the view is the C-order (row-major) layout of `shape`, ignoring the strides of
  /// dimensions of extent 1 (as torch's is_contiguous does, c10/core/Contiguity.h); an empty
  /// tensor is contiguous. Never throws.
  [[nodiscard]] bool is_contiguous() const;
};

/// Reads the zip directory, data.pkl and the byteorder record of the torch.save file `file`,
/// but no element data, and checks the view against the storage record's size. Host only;
/// allocates at most the pickle (64 KiB at the most, or it is rejected). Deterministic.
/// @throws io_error "FILE: ..." naming the problem when `file`
///   - is missing, not a zip archive, or a legacy (pre-1.6, non-zip) torch.save file;
///   - is a zip archive without a "<archive>/data.pkl" member, or with a compressed member;
///   - has a byteorder record other than "little";
///   - holds something other than a single tensor (a dict or list of tensors, a module, a
///     Parameter), or a pickle opcode or global outside the ones a tensor's pickle uses;
///   - has a storage of an unsupported type (complex, quantized, untyped: convert with
///     tensor.float() / tensor.long() before torch.save);
///   - has no storage record, or one whose size is not numel * element size;
///   - describes a view (offset, size, stride) that reaches past the end of its storage.
torch_tensor_header read_torch_header(const std::filesystem::path& file);

/// Reads the tensor saved by torch.save(tensor, file) into host memory in C (row-major) order,
/// honouring strides and storage offset (a transposed or sliced tensor reads as torch.load and
/// tensor.contiguous() would give it), and converts its elements to T with the types and
/// conversion rules of read_npy (float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t,
/// uint32_t, int64_t, uint64_t; bool reads as 0/1). `stored` of the result is the file's dtype.
/// A 0-d tensor reads with shape () and one element; an empty tensor with no elements.
/// Allocates at most the storage record (bounded by the file size) plus the result; reads the
/// record once and lets libzip verify its CRC. Host only.
/// float16 and bfloat16 tensors are not converted (read_torch_bits16 reads them at their width).
/// @throws io_error "FILE: ..." for every problem of read_torch_header, a corrupt member (CRC
///         mismatch, short read), a value that does not convert to T, a float16 or bfloat16
///         tensor ("FILE: float16 data is read only at 2 bytes per element ..."), and a result
///         whose num_elements * sizeof(T) bytes exceed host_memory_limit()
///         (check_declared_bytes, before it is allocated).
template <typename T>
npy_array<T> read_torch(const std::filesystem::path& file);

/// Reads a float16 (torch.HalfStorage) or bfloat16 (torch.BFloat16Storage) tensor as read_torch
/// does (C order, strides and offset honoured) without converting it: `data` holds each
/// element's 16-bit pattern (runtime/core/half.hpp widens them), `stored` says which type.
/// Host memory, 2 bytes per element.
/// @throws io_error "FILE: ..." as read_torch, and "FILE: the tensor is DTYPE, not float16 or
///         bfloat16" for another dtype.
npy_array<std::uint16_t> read_torch_bits16(const std::filesystem::path& file);

}  // namespace coopgnn
