// meshplan's per-user cache directory and its whole-file reads and atomic writes (cli/cache_files.h).
#include "cli/cache_files.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace meshplan::cli {

namespace fs = std::filesystem;

std::string cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/meshplan";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/meshplan";
  return "/tmp/meshplan-cache";
}

std::string read_cache_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_cache_file(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << bytes;
    if (!out.flush()) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace meshplan::cli
