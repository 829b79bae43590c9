// Dense row-major host matrices (docs/design.md section 3.3: features row-major float32).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {

/// An owning row-major matrix [rows, cols] of T in host memory. Zero-initialised. Move-only in
/// spirit (copies are allowed but explicit in hot code paths via clone()).
template <typename T>
class matrix {
 public:
  matrix() = default;
  /// @throws logic_error if rows or cols is negative.
  matrix(std::int64_t rows, std::int64_t cols, T fill = T{}) : rows_(rows), cols_(cols) {
    COOPGNN_EXPECTS(rows >= 0 && cols >= 0, "matrix shape [{}, {}] is negative", rows, cols);
    data_.assign(static_cast<std::size_t>(rows * cols), fill);
  }
  matrix(std::int64_t rows, std::int64_t cols, std::vector<T> data)
      : rows_(rows), cols_(cols), data_(std::move(data)) {
    COOPGNN_EXPECTS(
        rows >= 0 && cols >= 0 && static_cast<std::int64_t>(data_.size()) == rows * cols,
        "matrix data has {} values, shape [{}, {}] needs {}", data_.size(), rows, cols,
        rows * cols);
  }

  [[nodiscard]] std::int64_t rows() const { return rows_; }
  [[nodiscard]] std::int64_t cols() const { return cols_; }
  [[nodiscard]] std::int64_t size() const { return rows_ * cols_; }
  [[nodiscard]] T* data() { return data_.data(); }
  [[nodiscard]] const T* data() const { return data_.data(); }
  [[nodiscard]] T* row(std::int64_t i) { return data_.data() + i * cols_; }
  [[nodiscard]] const T* row(std::int64_t i) const { return data_.data() + i * cols_; }
  T& operator()(std::int64_t i, std::int64_t j) { return data_[i * cols_ + j]; }
  const T& operator()(std::int64_t i, std::int64_t j) const { return data_[i * cols_ + j]; }
  [[nodiscard]] std::vector<T>& values() { return data_; }
  [[nodiscard]] const std::vector<T>& values() const { return data_; }
  void fill(T v) { std::fill(data_.begin(), data_.end(), v); }
  /// Resizes to [rows, cols] and zero-fills.
  void reset(std::int64_t rows, std::int64_t cols) {
    rows_ = rows;
    cols_ = cols;
    data_.assign(static_cast<std::size_t>(rows * cols), T{});
  }

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::vector<T> data_;
};

}  // namespace coopgnn
