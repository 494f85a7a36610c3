// write_text_file: result files are written to a temporary file and renamed over the target, so an
// earlier result survives any failure (full disk, kill, bad path) whole.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "cli/options.h"

namespace meshplan::cli {

static Error unwritable(const std::string& path, const std::string& why) {
  return make_error("command line", "--output", path, "cannot be written (" + why + ")",
                    "check that the directory exists and is writable");
}

Result<bool> check_writable(const std::string& path) {
  if (path.empty()) return true;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return unwritable(path, "is a directory");
    if (::access(path.c_str(), W_OK) != 0) return unwritable(path, std::strerror(errno));
    return true;
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return unwritable(path, "no such directory");
  if (::access(dir.c_str(), W_OK) != 0) return unwritable(path, std::strerror(errno));
  return true;
}

Result<bool> write_text_file(const std::string& path, const std::string& text) {
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return unwritable(path, "is a directory");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or FIFO (/dev/stdout, a pipe): nothing to replace, write straight through.
    std::ofstream out(path, std::ios::binary);
    if (out) out << text;
    if (!out) return unwritable(path, std::strerror(errno));
    return true;
  }
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return unwritable(path, std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::remove(tmp.c_str());
      return unwritable(path, why);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return unwritable(path, why);
  }
  return true;
}

}  // namespace meshplan::cli
