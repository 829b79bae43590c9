// Output paths of the subcommands: refusing an output that would destroy an input or an existing
// directory, and writing output directories whole (tools/coopgnn/output_paths.cpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace coopgnn::cli {

/// `p` made absolute with every symbolic link and "." / ".." of its existing prefix resolved
/// (std::filesystem::weakly_canonical), for comparing paths. Does not throw (falls back to the
/// lexically normal absolute path).
std::filesystem::path resolved_path(const std::filesystem::path& p);

/// Checks, before any work, that `out` may receive a command's output directory:
/// - `out` must not be any of `inputs` (files or directories the command reads), nor a directory
///   holding one of them, nor lie inside an input that is a directory, after resolving symbolic
///   links, "." and ".." (resolved_path) or when both name the same file
///   (std::filesystem::equivalent). Every command that writes a dataset or a partition (convert,
///   generate task, split-edges, partition) checks its output with this one function;
/// - an existing `out` must be a directory (or a symbolic link to one), and when it holds
///   anything it is replaced only with `overwrite` (the command's --overwrite).
/// `option` names the output in messages ("OUT", "output").
/// @throws io_error "OPTION OUT is the input IN (both resolve to P): ..." / "... holds the input
///         IN ..." / "OPTION OUT lies inside the input directory IN: ..." / "OPTION OUT: exists and
///         is not a directory" / "OPTION OUT: exists and is not empty (N entries); pass --overwrite
///         to replace it".
void check_output_dir(const std::filesystem::path& out,
                      const std::vector<std::filesystem::path>& inputs, bool overwrite,
                      const std::string& option = "output");

/// Writes an output directory whole: `write` fills a fresh temporary sibling of `out`
/// (".NAME.tmp.PID.N" in out's parent, created when missing), which then takes out's place by
/// rename: an absent or empty `out` is replaced directly, a non-empty one is swapped with it
/// atomically (renameat2 RENAME_EXCHANGE; where the file system lacks it, out is first renamed
/// aside) and the old contents removed only after the new directory is in place. When `write`
/// throws, the temporary is removed and `out` is left as it was. A symbolic link `out` keeps
/// pointing at its target, whose contents are replaced. Call check_output_dir first.
/// @throws io_error naming the directory that cannot be created or renamed; whatever `write`
///         throws.
void write_dir_atomically(const std::filesystem::path& out,
                          const std::function<void(const std::filesystem::path& tmp)>& write);

/// Checks, before a long run, that files can be written into directory `dir`: creates it (with
/// its parents) when missing, then creates and removes a probe file ".coopgnn-probe.PID.N" in
/// it. `option` names the command-line option in messages ("--save-model").
/// @throws io_error "OPTION DIR: cannot write there: REASON" (the errno text; the directory or
///         one of its parents cannot be created, is a file, or refuses a new file).
void check_writable_dir(const std::filesystem::path& dir, const std::string& option);

/// Checks, before a long run, that `file` can be written: its parent directory passes
/// check_writable_dir, and an existing `file` opens for writing (not truncated: O_WRONLY |
/// O_APPEND) and is not a directory.
/// @throws io_error "OPTION FILE: cannot write there: REASON".
void check_writable_file(const std::filesystem::path& file, const std::string& option);

}  // namespace coopgnn::cli
