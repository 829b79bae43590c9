// A synthetic heterogeneous graph shaped like OGB-LSC's MAG240M (docs/design.md section 3.2):
// papers with float16 features and labels, featureless authors and institutions, five relations.
#pragma once

#include <cstdint>

#include "runtime/graph/dataset.hpp"
#include "runtime/graph/edges.hpp"

namespace coopgnn {

/// Sizes and draws of generate_hetero.
struct hetero_options {
  int scale = 16;                      ///< papers = 2^scale, 1 <= scale <= 34
  std::int64_t authors = -1;           ///< -1: 2^(scale - 4) (at least 1)
  std::int64_t institutions = -1;      ///< -1: 2^(scale - 10) (at least 1)
  std::int64_t cites_factor = 8;       ///< R-MAT citations drawn per paper (before cleaning)
  std::int64_t authors_per_paper = 3;  ///< writes edges per paper (before deduplication)
  std::int64_t feature_dim = 768;      ///< F of the paper features (float16)
  std::int64_t classes = 153;          ///< paper classes (MAG240M's count)
  double train_fraction = 0.1;         ///< of the papers; valid the next valid_fraction
  double valid_fraction = 0.05;
  std::uint64_t seed = 1;
};

/// Generates a MAG240M-shaped heterogeneous dataset (hetero_schema; node types paper, author,
/// institution in that order, as the mag240m converter writes them):
///  - paper:cites:paper: generate_rmat over the papers (scale, edge factor cites_factor, keyed
///    permutation), symmetrised, self-loops and duplicates removed;
///  - author:writes:paper: each paper p draws authors_per_paper authors a = floor(A u^2) (u a
///    keyed uniform of (p, j): a skewed, power-law-like author popularity), duplicates removed;
///    and its reverse paper:rev_writes:author;
///  - author:affiliated_with:institution: each author one institution floor(I u^2), and its
///    reverse institution:rev_affiliated_with:author;
///  - paper labels: a keyed uniform class in [0, classes); authors and institutions -1;
///  - paper features: class-conditional Gaussians x = (mu_c + sigma eps) / sqrt(1 + sigma^2),
///    sigma = sqrt(F / 2), mu_c and eps keyed standard normals per column, stored as float16
///    (hetero_schema::features16, truncated to binary16: 2 bytes per element, never float32 in
///    memory); authors and institutions featureless (R-GCN learns their embeddings);
///  - split: a keyed permutation of the papers cut by the fractions, each part ascending.
/// Every draw is keyed by (seed, purpose generate or split, layer, id): the output depends on the
/// options only. Memory: the features (papers x F x 2 bytes) and the edge lists (24 bytes per
/// edge while cleaning).
/// @param stats optional: the citation cleaning counts (generate_rmat's)
/// @throws logic_error for scale outside [1, 34], authors or institutions < 1 (after defaults),
///         cites_factor or authors_per_paper < 1, feature_dim < 1, classes < 1, or fractions
///         outside [0, 1] summing past 1.
dataset generate_hetero(const hetero_options& opt, edge_stats* stats = nullptr);

}  // namespace coopgnn
