// meshplan's per-user cache directory and its whole-file reads and atomic writes.
#pragma once
#include <string>

namespace meshplan::cli {

/// $XDG_CACHE_HOME/meshplan, else $HOME/.cache/meshplan, else /tmp/meshplan-cache.
std::string cache_dir();

/// The file's bytes, or "" when it cannot be read (a cache miss).
std::string read_cache_file(const std::string& path);

/// Writes through a temp file and a rename, so parallel first runs never leave a half-written file;
/// creates the directory. Failures are silent: a cache that cannot be written is only a slower next run.
void write_cache_file(const std::string& path, const std::string& bytes);

}  // namespace meshplan::cli
