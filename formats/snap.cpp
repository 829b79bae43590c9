// SNAP-style edge lists (formats/formats.hpp convert_snap) and their registry entry.

#include "formats/detail/common.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

dataset convert_snap(const fs::path& file, const convert_options& opt, convert_report* report) {
  check_options(opt);
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  dataset ds;
  ds.name = opt.name.empty() ? default_name(file) : opt.name;
  vid_t const mx = read_edge_lines(file, ds, rep);
  if (ds.src.empty()) COOPGNN_IO_FAIL("{}: no edges (only comments or blank lines)", file.string());
  check_declared_nodes(file.string(), "|V| (1 + the largest vertex id)", plus_one(mx));
  ds.num_nodes = mx + 1;
  finish_edges(ds, opt, rep, file.string(), stored_once_policy::suggest);
  validate_dataset(ds, file.string());
  return ds;
}


namespace formats::detail {

namespace {

bool detect_snap(const fs::path& input) {
  std::error_code ec;
  if (!fs::is_regular_file(input, ec)) return false;
  std::string const f = input.filename().string();
  for (const char* ext : {".txt", ".txt.gz", ".tsv", ".edges", ".el"}) {
    if (f.ends_with(ext)) return true;
  }
  return false;
}

constexpr std::string_view kSnapOptions[] = {"--features"};

}  // namespace

const input_format& snap_format() {
  static const input_format f{
      "snap",
      "an edge list file (.txt or .txt.gz), SNAP style",
      "an edge list (.txt or .txt.gz): 'src dst' per line separated by spaces, tabs or a\n"
      "comma, '#'/'%' comments, LF or CRLF, an optional header line ('id_1,id_2',\n"
      "'source target': skipped and said). Kept as stored (SNAP graphs are often\n"
      "directed); a list stored once gets a notice suggesting --symmetrize.",
      false,
      kSnapOptions,
      detect_snap,
      convert_snap,
      true};
  return f;
}

}  // namespace formats::detail

}  // namespace coopgnn
