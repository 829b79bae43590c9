// The transpose flag of GEMM operands, shared by the host and cuBLAS GEMM (no dependencies, so
// .cu files can include it).
#pragma once

namespace coopgnn {

/// Whether a GEMM operand is used as stored or transposed.
enum class op { none, transpose };

}  // namespace coopgnn
