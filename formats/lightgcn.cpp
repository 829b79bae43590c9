// LightGCN / NGCF user-item directories (formats/formats.hpp convert_lightgcn) and their
// registry entry.
#include <algorithm>
#include <limits>
#include <utility>

#include "formats/detail/common.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

namespace {

/// Reads one LightGCN file, calling f(in, user, items) per non-blank line "u i1 i2 ...".
/// @returns the number of user lines; @throws io_error for an empty file.
template <typename F>
std::int64_t read_user_lines(const fs::path& file, convert_report& rep, F&& f) {
  read_file(rep, file.string());
  line_reader in(file);
  std::string_view line;
  std::vector<vid_t> items;
  std::int64_t users = 0;
  while (in.next(line)) {
    if (blank(line)) continue;
    items.clear();
    vid_t user = -1;
    std::size_t pos = line.find_first_not_of(" \t");
    while (pos != std::string_view::npos) {
      std::size_t const end = line.find_first_of(" \t", pos);
      std::string_view const tok =
          line.substr(pos, end == std::string_view::npos ? line.npos : end - pos);
      if (user < 0) {
        user = parse_id(tok, in, "user id");
      } else {
        items.push_back(parse_id(tok, in, "item id"));
      }
      pos = end == std::string_view::npos ? end : line.find_first_not_of(" \t", end);
    }
    f(in, user, items);
    ++users;
  }
  if (users == 0) {
    COOPGNN_IO_FAIL("{}: empty file: expected one line 'user item item ...' per user",
                    file.string());
  }
  return users;
}

}  // namespace

dataset convert_lightgcn(const fs::path& dir, const convert_options& opt, convert_report* report) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    COOPGNN_IO_FAIL("{}: not a directory (a LightGCN dataset directory holds train.txt, test.txt)",
                    dir.string());
  }
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  std::vector<std::pair<vid_t, vid_t>> train;  // (user, item)
  std::vector<std::pair<vid_t, vid_t>> test;
  vid_t max_item = -1;
  vid_t next_user = 0;
  read_user_lines(
      dir / "train.txt", rep, [&](const line_reader& in, vid_t u, const std::vector<vid_t>& items) {
        if (u != next_user) {
          in.fail(
              fmt::format("user id {}, expected {}: train.txt lists users 0..U-1 in order, one "
                          "line each",
                          u, next_user));
        }
        ++next_user;
        for (vid_t i : items) {
          train.emplace_back(u, i);
          max_item = std::max(max_item, i);
        }
      });
  vid_t const users = next_user;
  read_user_lines(
      dir / "test.txt", rep, [&](const line_reader& in, vid_t u, const std::vector<vid_t>& items) {
        if (u >= users) {
          in.fail(fmt::format("user id {} is out of range: train.txt has {} users (ids 0..{})", u,
                              users, users - 1));
        }
        for (vid_t i : items) {
          test.emplace_back(u, i);
          max_item = std::max(max_item, i);
        }
      });
  if (train.empty()) {
    COOPGNN_IO_FAIL("{}: no interactions (every user line is empty)", (dir / "train.txt").string());
  }
  vid_t const items = plus_one(max_item);
  check_declared_nodes(
      (dir / "train.txt").string() + ", test.txt", "|V| (users + 1 + the largest item id)",
      items > std::numeric_limits<vid_t>::max() - users ? std::numeric_limits<vid_t>::max()
                                                        : users + items);
  dataset ds;
  ds.name = opt.name.empty() ? default_name(dir) : opt.name;
  ds.num_nodes = users + items;
  std::sort(train.begin(), train.end());
  std::int64_t const read = static_cast<std::int64_t>(train.size());
  train.erase(std::unique(train.begin(), train.end()), train.end());
  link_task lt;
  lt.name = "link_prediction";
  lt.item_begin = users;
  lt.item_end = users + items;
  for (auto [u, i] : train) {
    lt.train.src.push_back(u);
    lt.train.dst.push_back(users + i);
    ds.src.push_back(u);
    ds.dst.push_back(users + i);
    ds.src.push_back(users + i);
    ds.dst.push_back(u);
  }
  for (auto [u, i] : test) {
    lt.test.src.push_back(u);
    lt.test.dst.push_back(users + i);
  }
  ds.link = std::move(lt);
  edge_stats& st = rep.edges;
  st.edges_read = read;
  st.reverse_edges_added = static_cast<std::int64_t>(train.size());
  st.duplicates_removed = read - static_cast<std::int64_t>(train.size());
  // Sorted by (src, dst), as the other converters leave their edges.
  clean_edges(ds.src, ds.dst, false, false);
  st.edges_final = ds.num_edges();
  validate_dataset(ds, dir.string());
  return ds;
}


namespace formats::detail {

namespace {

bool detect_lightgcn(const fs::path& input) {
  std::error_code ec;
  return fs::is_regular_file(input / "train.txt", ec) && fs::is_regular_file(input / "test.txt", ec);
}

}  // namespace

const input_format& lightgcn_format() {
  static const input_format f{
      "lightgcn",
      "a LightGCN/NGCF user-item directory (train.txt, test.txt)",
      "a LightGCN/NGCF directory (train.txt, test.txt: 'user item item ...' per\n"
      "line; users 0..U-1 in train.txt order, item i = vertex U + i, I = 1 + max item).\n"
      "Train interactions become edges in both directions and the link task's training\n"
      "positives; test interactions its test positives; item_begin = U, item_end = U + I.",
      true,
      {},  // reads none of the format-specific options
      detect_lightgcn,
      convert_lightgcn};
  return f;
}

}  // namespace formats::detail

}  // namespace coopgnn
