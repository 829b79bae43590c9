// GNN layers with hand-written forward and backward on sampled blocks (docs/design.md section 1,
// models; section 4.4, layers on sampled blocks; section 6, forward/backward per layer).
//
// Written once for every backend (docs/design.md section 2): a layer's parameters live in a
// parameter_set in the memory space of an exec_context, its inputs and outputs are tensors in
// that space, and every step is a kernel entry (gemm, spmm, the element-wise ops of
// kernels/dense/elementwise.hpp) that dispatches to the host reference or the CUDA kernel. The
// host backend is the reference; on the CUDA backend the same calls run on the PE's compute
// stream without synchronising (float32 only), and agree with the host within the tolerances
// the kernels document. Every random decision (dropout, initialisation) is keyed by global ids
// through runtime/core/rng.hpp, so the same vertex gets the same mask on every PE and backend.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/sample/block.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn::models {

/// A trainable tensor's name, shape and offset in its parameter_set's flat buffers.
struct param_info {
  std::string name;  ///< e.g. "sage0.w_self", unique within a set
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t offset = 0;  ///< first element in values() / grads()
};

/// The parameters of a model (or of standalone layers) in two flat buffers of one memory space:
/// values and gradients, each parameter row-major and back to back in registration order, so one
/// all-reduce covers every gradient (docs/design.md section 6.2, step 6) and the optimizer runs on
/// one array. Register with add(), then allocate() once; views stay valid while the set lives (it
/// is neither copyable nor movable).
template <typename T>
class parameter_set {
 public:
  parameter_set() = default;
  parameter_set(const parameter_set&) = delete;
  parameter_set& operator=(const parameter_set&) = delete;

  /// Registers a [rows, cols] parameter and returns its index. A total beyond 64 bits
  /// saturates num_values() at INT64_MAX (then allocate() throws).
  /// @throws logic_error after allocate(), for a negative shape or a repeated name.
  std::size_t add(std::string name, std::int64_t rows, std::int64_t cols);
  /// Allocates values and gradients in ctx.space(), both zero. @throws logic_error when the
  /// total saturated (see add) or when called twice; cuda_error when the device pool is
  /// exhausted.
  void allocate(const exec_context& ctx);
  [[nodiscard]] bool allocated() const { return allocated_; }

  [[nodiscard]] std::size_t count() const { return infos_.size(); }
  [[nodiscard]] const param_info& info(std::size_t i) const { return infos_.at(i); }
  [[nodiscard]] const std::vector<param_info>& infos() const { return infos_; }
  /// Total number of trainable scalars.
  [[nodiscard]] std::int64_t num_values() const { return total_; }
  [[nodiscard]] memory_space space() const { return values_.space(); }

  /// Parameter i's value / gradient [rows, cols] (in space()). @throws logic_error before
  /// allocate() or for i out of range.
  [[nodiscard]] tensor_view<T> value(std::size_t i);
  [[nodiscard]] tensor_view<const T> value(std::size_t i) const;
  [[nodiscard]] tensor_view<T> grad(std::size_t i);
  [[nodiscard]] tensor_view<const T> grad(std::size_t i) const;
  /// All values / all gradients, flat, in registration order.
  [[nodiscard]] buffer_view<T> values() { return values_.view(); }
  [[nodiscard]] buffer_view<const T> values() const { return values_.view(); }
  [[nodiscard]] buffer_view<T> grads() { return grads_.view(); }
  [[nodiscard]] buffer_view<const T> grads() const { return grads_.view(); }

 private:
  std::vector<param_info> infos_;
  std::int64_t total_ = 0;
  bool allocated_ = false;
  buffer<T> values_;
  buffer<T> grads_;
};

/// What keys a training step's dropout masks (docs/design.md section 4.4): the run seed and the
/// global minibatch index; with training == false no dropout is applied.
struct step_key {
  std::uint64_t run_seed = 0;
  std::uint32_t batch = 0;
  bool training = false;
};

/// Graph convolution flavour of conv_layer.
enum class conv_kind {
  sage,  ///< GraphSAGE-mean (Hamilton et al., NeurIPS 2017, eq. 1 with concat replaced by two
         ///< weight matrices): h_s W_self + mean_t(h_t) W_neigh + b
  gcn,   ///< GCN (Kipf & Welling, ICLR 2017, eq. 2), symmetric normalisation with self-loops
  mlp,   ///< no message passing: h_s W + b on the destinations only (the TMA paper's MLP
         ///< encoder; blocks are then sampled with fanout 0: sources = destinations)
  gat,   ///< multi-head graph attention (Velickovic et al., ICLR 2018, eqs. 1-6), gat_options
  rgcn,  ///< relational GCN (Schlichtkrull et al., ESWC 2018, eqs. 2-3) on typed blocks,
         ///< rgcn_options
};

/// "sage", "gcn", "mlp", "gat" or "rgcn" (the --model names).
std::string to_string(conv_kind k);
/// Parses "sage", "gcn", "mlp", "gat" or "rgcn". @throws logic_error naming the value and the
/// accepted names.
conv_kind parse_conv_kind(const std::string& name);

/// The relational options of a conv_kind::rgcn layer (ignored by the other kinds).
struct rgcn_options {
  std::int32_t num_relations = 1;  ///< R >= 1: the typed blocks' rows per destination
  /// B: basis decomposition W_r = sum_b a_rb V_b (Schlichtkrull et al., eq. 3), 1 <= B; 0 = one
  /// full W_r per relation.
  std::int64_t num_bases = 0;
  bool self_loop = true;  ///< the W_0 h_i term of eq. 2 (a separate self-connection weight)
  /// B: block-diagonal decomposition W_r = diag(Q_r1, ..., Q_rB), Q_rb [in / B, out / B]
  /// (Schlichtkrull et al., eq. 4), 1 <= B dividing in and out; 0 = none. Excludes num_bases.
  std::int64_t num_blocks = 0;
};

/// The attention options of a conv_kind::gat layer (ignored by the other kinds).
struct gat_options {
  std::int64_t heads = 1;       ///< H >= 1 attention heads
  bool concat = true;           ///< concatenate the heads (out_dim = H F) or average them
                                ///< (out_dim = F; the paper's output layer, eq. 6)
  float attn_dropout = 0.0f;    ///< p in [0, 1) on the normalised attention coefficients
  float negative_slope = 0.2f;  ///< LeakyReLU slope of the scores, >= 0 (the paper's 0.2)
  bool residual = false;        ///< add h_dst W_res (a learned [in, out_dim] projection)
  bool self_loops = true;       ///< every destination attends to itself (the paper's j = i)
};

/// Whether dropout keeps element (vertex, column) of the input of layer `layer_index` in minibatch
/// `batch`: rng::to_unit(w[column % 4]) >= p with w = rng::draw4(make_stream(run_seed,
/// purpose::dropout, layer_index), vertex, column / 4, batch): one Philox call serves four
/// consecutive columns (dropout_forward in kernels/dense/elementwise.hpp computes these masks).
/// A pure function of its arguments (never of a row position, thread or PE).
/// @param vertex  global vertex id; @param column feature column (< 2^32); @param p in [0, 1)
bool dropout_keeps(std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
                   vid_t vertex, std::int64_t column, float p);

/// What conv_layer::forward keeps for backward, in the context's memory space. Public so that
/// tests and the pipeline can look at intermediate values; treat as opaque otherwise.
template <typename T>
struct conv_cache {
  tensor<T> h;                ///< [num_src, in_dim] input after dropout (a copy)
  buffer<std::uint8_t> keep;  ///< [num_src * in_dim] dropout mask, empty when none applied
  T keep_scale = T{1};        ///< 1 / (1 - p) for kept elements
  tensor<T> mid;              ///< aggregate [num_dst, in_dim] or transform [num_src, out]
  tensor<T> out;              ///< [num_dst, out_dim] layer output (after ReLU)
  buffer<T> edge_values;      ///< [num_edges] GCN edge coefficients (empty for SAGE)
  // GAT only (E' = edges of the block plus its self-loops; head-major [H * E'] edge arrays):
  buffer<T> scores;               ///< LeakyReLU scores
  buffer<T> softmax;              ///< edge softmax of the scores, per head
  buffer<T> alpha;                ///< softmax after attention dropout (what aggregates)
  buffer<std::uint8_t> att_keep;  ///< attention dropout mask, empty when none applied
  T att_scale = T{1};
  /// Bytes held (working-set accounting).
  [[nodiscard]] std::int64_t bytes() const {
    return static_cast<std::int64_t>(h.bytes() + keep.bytes() + mid.bytes() + out.bytes() +
                                     edge_values.bytes() + scores.bytes() + softmax.bytes() +
                                     alpha.bytes() + att_keep.bytes());
  }
};

/// One graph convolution over a sampled block (message-flow graph).
///
/// forward, for destination s < b.num_dst (t ranges over the block's edges t -> s, w_e =
/// b.weights[e], d = b.src_degree, full-graph in-degrees):
///   1. dropout on h_src if key.training && p > 0: element (i, j) kept iff
///      dropout_keeps(key.run_seed, key.batch, layer_index, b.src_ids[i], j, p), kept values
///      multiplied by 1 / (1 - p);
///   2. SAGE: out[s] = h[s] W_self + (sum_e w_e h[t]) W_neigh + bias  (a dst without edges
///      aggregates 0);
///      GCN:  out[s] = (1 / (d_s + 1)) h[s] W + sum_e w_e d_s / sqrt((d_s + 1)(d_t + 1)) h[t] W
///            + bias. With every in-edge kept and w_e = 1/d_s this is exactly the full-batch GCN
///            row of D^-1/2 (A + I) D^-1/2 H W; with sampling the Hajek weights reweight the kept
///            edges (docs/design.md section 4.4). A dst with d_s = 0 gets only the self term.
///      GAT (H = gat.heads, F = out_dim / H when concatenating, out_dim when averaging; the block's
///      weights are not used, attention replaces them): z = h W [num_src, H F]; per head k,
///      el[i, k] = a_dst[k] . z[i, k] (destinations i < num_dst: their rows are the first num_dst
///      sources) and er[t, k] = a_src[k] . z[t, k]; for every edge t -> s of the block and, with
///      gat.self_loops, one added edge s -> s in front of them (a self-loop the graph already has
///      gets weight 0, so each destination attends to itself once):
///        e_st^k = LeakyReLU_slope(el[s, k] + er[t, k]),
///        alpha_st^k = exp(e_st^k - m_s^k) / sum_t' exp(e_st'^k - m_s^k)  (max-subtracted),
///        alpha after attention dropout (keyed by global (s, t, head), kernels/sparse/attention),
///        o_s^k = sum_t alpha_st^k z[t, k];
///      out[s] = concat_k o_s^k (or mean_k o_s^k) [+ h[s] W_res] + bias. A destination without
///      any edge (no self-loops, zero in-degree) or with every edge dropped aggregates 0.
///      R-GCN (R = rgcn.num_relations; the block is typed, row s R + r holds destination s's
///      kept edges of relation r with Hajek weights, 1 / |N_r(s)| when every edge is kept):
///        out[s] = h[s] W_0 + sum_r (sum_{e in row s R + r} w_e h[t]) W_r + bias  (eq. 2, with
///        c_{i,r} = |N_r(i)| under full neighbourhoods), W_r = sum_b a_rb V_b with bases (eq. 3),
///        W_r = diag(Q_r1, ..., Q_rB) with blocks (eq. 4).
///        Computed as agg = A_rows h [num_dst, R in] (one SpMM over the R num_dst rows), then
///        agg [W_0; ...; W_{R-1}] (one GEMM with the stacked [R in, out] weight). A relation
///        with no kept edge into s contributes 0. Blocks are expanded into the dense stacked
///        weight (a scatter through spmm_transpose_add, zeros off the diagonal blocks) and their
///        gradient gathered back from the dense dW (spmm): the GEMMs cost B times the
///        block-diagonal products' flops and the expansion R in out elements per call; the
///        parameters (and the optimizer state) are R in out / B.
///   3. ReLU if apply_relu (GAT: ELU, the paper's hidden nonlinearity).
/// Transform-then-aggregate is used when in_dim > out_dim, aggregate-then-transform otherwise:
/// the same math, chosen from the dimensions only.
///
/// Parameters (registered in the parameter_set given to the constructor): SAGE
/// "sage<l>.w_self" [in, out], "sage<l>.w_neigh" [in, out], "sage<l>.bias" [1, out]; GCN
/// "gcn<l>.weight" [in, out], "gcn<l>.bias" [1, out]; MLP "mlp<l>.weight", "mlp<l>.bias"
/// (l = layer_index); GAT "gat<l>.weight" [in, H F], "gat<l>.attn_dst" and "gat<l>.attn_src"
/// [1, H F], "gat<l>.res_weight" [in, out] (with residual), "gat<l>.bias" [1, out]; R-GCN
/// "rgcn<l>.w_self" [in, out] (with self_loop), "rgcn<l>.weight" [R in, out] (W_r stacked, rows
/// r in .. r in + in - 1) or "rgcn<l>.bases" [B in, out] and "rgcn<l>.coeff" [R, B] (bases)
/// or "rgcn<l>.blocks" [R in, out / B] (blocks: rows r in + b in/B .. + in/B - 1 are Q_rb),
/// "rgcn<l>.bias" [1, out]. MLP reads only
/// the block's first num_dst source rows (its destinations) and ignores its edges. Explicitly
/// instantiated for float and double (double: host and emulated backends only).
template <typename T>
class conv_layer {
 public:
  /// Registers the layer's parameters in `params` (which must outlive the layer and be
  /// allocated before any other call).
  /// @param in_dim, out_dim  feature widths, >= 1
  /// @param layer_index      keys dropout masks and initialisation; unique within a model
  /// @param dropout          p in [0, 1), applied to the layer's input
  /// @param gat              GAT's options (kind gat only)
  /// @throws logic_error naming the argument when a width is < 1 or p is outside [0, 1), or
  ///         when `params` is already allocated; for GAT when heads < 1, out_dim is not a
  ///         multiple of heads (concat), attn_dropout is outside [0, 1) or the slope is < 0.
  /// @param rgcn             R-GCN's options (kind rgcn only; logic_error for R < 1, B < 0,
  ///                         bases together with blocks, or blocks not dividing in_dim and
  ///                         out_dim)
  conv_layer(conv_kind kind, std::int64_t in_dim, std::int64_t out_dim, std::uint32_t layer_index,
             bool apply_relu, float dropout, parameter_set<T>& params, const gat_options& gat = {},
             const rgcn_options& rgcn = {});

  /// Glorot-uniform weights (Glorot & Bengio, AISTATS 2010, eq. 16: U(-a, a), a = sqrt(6 / (in +
  /// out))), zero bias. Element (r, c) of the k-th weight matrix of this layer is drawn from
  /// rng::draw4(make_stream(seed, purpose::init, layer_index), r, c, k): a pure function of the
  /// key. Computed on the host and copied into ctx.space(). Clears the gradients.
  void init(const exec_context& ctx, std::uint64_t seed);

  /// The layer's output for the block's destinations (see the class comment for the formula).
  /// @param b      the block in ctx.space(): indptr, indices, weights; src_ids (dropout) and
  ///               src_degree (GCN)
  /// @param h_src  [b.num_src, in_dim] source features, destinations first
  /// @param key    dropout key; no dropout unless key.training
  /// @param cache  when not null, filled with what backward needs (previous content replaced)
  /// @returns      [b.num_dst, out_dim] in ctx.space()
  /// @throws logic_error naming the argument on a shape or space mismatch or a malformed block
  ///         (GCN without src_degree; on the host backend also bad offsets or indices).
  /// Host: rows split over ctx.threads() where the kernels allow (same bits for any count).
  /// CUDA: asynchronous on ctx's compute stream.
  tensor<T> forward(const exec_context& ctx, const block_view& b, tensor_view<const T> h_src,
                    const step_key& key, conv_cache<T>* cache) const;

  /// Backward of forward: ADDS dL/dW and dL/dbias into the parameters' gradients and returns
  /// dL/dh_src [b.num_src, in_dim] (through dropout, so it is the gradient with respect to
  /// forward's h_src argument), or an empty tensor when input_grad is false (the input layer).
  /// @param b         the same block that forward saw
  /// @param grad_out  [b.num_dst, out_dim] dL/d(output)
  /// @param cache     filled by forward on (b, h_src)
  /// @throws logic_error on a shape mismatch between grad_out, cache and block.
  /// Deterministic (fixed summation orders).
  tensor<T> backward(const exec_context& ctx, const block_view& b, tensor_view<const T> grad_out,
                     const conv_cache<T>& cache, bool input_grad = true);

  /// Indices of the layer's parameters in the set (w_self/weight, [w_neigh,] bias).
  [[nodiscard]] std::vector<std::size_t> param_indices() const;

  [[nodiscard]] conv_kind kind() const { return kind_; }
  [[nodiscard]] std::int64_t in_dim() const { return in_dim_; }
  [[nodiscard]] std::int64_t out_dim() const { return out_dim_; }
  [[nodiscard]] std::uint32_t layer_index() const { return layer_index_; }
  [[nodiscard]] bool apply_relu() const { return apply_relu_; }
  [[nodiscard]] float dropout() const { return dropout_; }
  [[nodiscard]] const gat_options& gat() const { return gat_; }
  [[nodiscard]] const rgcn_options& rgcn() const { return rgcn_; }
  /// True when forward transforms before aggregating (in_dim > out_dim; never for R-GCN, which
  /// always aggregates per relation first).
  [[nodiscard]] bool transform_first() const {
    return kind_ != conv_kind::rgcn && in_dim_ > out_dim_;
  }

 private:
  tensor<T> gat_forward(const exec_context& ctx, const block_view& b, tensor_view<const T> h,
                        const step_key& key, conv_cache<T>& c) const;
  tensor<T> gat_backward(const exec_context& ctx, const block_view& b, tensor_view<const T> g,
                         const conv_cache<T>& cache, bool input_grad);
  tensor<T> rgcn_forward(const exec_context& ctx, const block_view& b, tensor_view<const T> h,
                         conv_cache<T>& c) const;
  tensor<T> rgcn_backward(const exec_context& ctx, const block_view& b, tensor_view<const T> g,
                          const conv_cache<T>& cache, bool input_grad);
  /// R-GCN's stacked [R in, out] relation weight: the parameter itself, or (bases) computed
  /// into `owned` as coeff [R, B] x bases [B, in out], or (blocks) the diagonal blocks
  /// scattered into a zero [R in, out] `owned`.
  tensor_view<const T> rgcn_relation_weight(const exec_context& ctx, tensor<T>& owned) const;
  void check_block(const exec_context& ctx, const block_view& b, std::int64_t h_rows,
                   std::int64_t h_cols, const char* fn) const;

  conv_kind kind_;
  std::int64_t in_dim_;
  std::int64_t out_dim_;
  std::uint32_t layer_index_;
  bool apply_relu_;
  float dropout_;
  parameter_set<T>* params_;
  std::size_t w_self_ = 0;    // SAGE: W_self; GCN: W
  std::size_t w_neigh_ = 0;   // SAGE only; GAT: attn_dst
  std::size_t attn_src_ = 0;  // GAT only
  std::size_t w_res_ = 0;     // GAT with residual
  std::size_t bias_ = 0;
  std::size_t coeff_ = 0;  // R-GCN with bases: a [R, B]
  gat_options gat_;
  rgcn_options rgcn_;
};

/// What linear_layer::forward keeps for backward.
template <typename T>
struct linear_cache {
  tensor<T> x;                ///< [n, in_dim] input after dropout (a copy)
  buffer<std::uint8_t> keep;  ///< dropout mask, empty when none applied
  T keep_scale = T{1};
  [[nodiscard]] std::int64_t bytes() const {
    return static_cast<std::int64_t>(x.bytes() + keep.bytes());
  }
};

/// y = dropout(x) W + b, no activation (an MLP head). Dropout as in conv_layer, keyed by the
/// global ids of the rows. Parameters "linear<l>.weight" [in, out] and "linear<l>.bias" [1, out].
/// Explicitly instantiated for float and double.
template <typename T>
class linear_layer {
 public:
  /// @throws logic_error when a width is < 1, dropout is outside [0, 1), or params is allocated.
  linear_layer(std::int64_t in_dim, std::int64_t out_dim, std::uint32_t layer_index, float dropout,
               parameter_set<T>& params);

  /// Glorot-uniform weight keyed as conv_layer::init (stream (seed, init, layer_index), matrix 0),
  /// zero bias, cleared gradients.
  void init(const exec_context& ctx, std::uint64_t seed);

  /// @param x        [n, in_dim] in ctx.space()
  /// @param row_ids  [n] global vertex ids of x's rows in ctx.space(): they key the dropout mask;
  ///                 only read when key.training && p > 0 (may be empty otherwise)
  /// @param cache    when not null, filled for backward
  /// @returns        [n, out_dim]
  /// @throws logic_error on a shape or space mismatch or a row_ids size != n while dropout
  ///         applies.
  tensor<T> forward(const exec_context& ctx, tensor_view<const T> x,
                    buffer_view<const vid_t> row_ids, const step_key& key,
                    linear_cache<T>* cache) const;

  /// Returns dL/dx [n, in_dim] and ADDS dL/dW, dL/dbias into the parameters' gradients.
  /// @param grad_out [n, out_dim]. @throws logic_error on a shape mismatch with the cache.
  tensor<T> backward(const exec_context& ctx, tensor_view<const T> grad_out,
                     const linear_cache<T>& cache);

  [[nodiscard]] std::vector<std::size_t> param_indices() const { return {weight_, bias_}; }
  [[nodiscard]] std::int64_t in_dim() const { return in_dim_; }
  [[nodiscard]] std::int64_t out_dim() const { return out_dim_; }
  [[nodiscard]] std::uint32_t layer_index() const { return layer_index_; }
  [[nodiscard]] float dropout() const { return dropout_; }

 private:
  std::int64_t in_dim_;
  std::int64_t out_dim_;
  std::uint32_t layer_index_;
  float dropout_;
  parameter_set<T>* params_;
  std::size_t weight_ = 0;
  std::size_t bias_ = 0;
};

}  // namespace coopgnn::models
