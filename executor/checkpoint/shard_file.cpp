// Atomic, checksummed shard files (POSIX open/write/fsync/rename) and their verified reader.
#include "executor/checkpoint/shard_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace meshplan::exec {

namespace {

constexpr char kMagic[8] = {'M', 'S', 'H', 'P', 'C', 'K', 'P', 'T'};
constexpr char kTrailer[8] = {'E', 'N', 'D', 'S', 'H', 'A', 'R', 'D'};
constexpr uint32_t kVersion = 1;

Error io_error(const std::string& path, const std::string& what) {
  return make_error(path, "checkpoint", "", what + ": " + std::strerror(errno),
                    "check the --checkpoint-dir path, its permissions and free space");
}

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

bool fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

void put(std::string& out, const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }

std::string serialize(const std::vector<Section>& sections) {
  std::string out;
  put(out, kMagic, 8);
  put(out, &kVersion, 4);
  const uint32_t count = static_cast<uint32_t>(sections.size());
  put(out, &count, 4);
  for (const auto& s : sections) {
    const uint32_t name_len = static_cast<uint32_t>(s.name.size());
    const uint64_t bytes = s.bytes.size();
    const uint64_t hash = fnv1a64(s.bytes.data(), bytes);
    put(out, &name_len, 4);
    put(out, s.name.data(), name_len);
    put(out, &bytes, 8);
    put(out, &hash, 8);
    put(out, s.bytes.data(), bytes);
  }
  put(out, kTrailer, 8);
  return out;
}

// Writes all of `data` to fd; with crash_after >= 0 stops there, syncs and kills the process.
bool write_all(int fd, const std::string& data, int64_t crash_after) {
  size_t done = 0;
  while (done < data.size()) {
    size_t chunk = data.size() - done;
    if (crash_after >= 0 && static_cast<int64_t>(done) < crash_after)
      chunk = std::min(chunk, static_cast<size_t>(crash_after - static_cast<int64_t>(done)));
    ssize_t w = ::write(fd, data.data() + done, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(w);
    if (crash_after >= 0 && static_cast<int64_t>(done) >= crash_after) {
      ::fsync(fd);
      ::kill(::getpid(), SIGKILL);  // test hook: die in the middle of a checkpoint write
    }
  }
  return true;
}

Result<bool> write_atomic(const std::string& path, const std::string& data, int64_t crash_after) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return io_error(tmp, "cannot create");
  if (!write_all(fd, data, crash_after) || ::fsync(fd) != 0) {
    Error e = io_error(tmp, "cannot write");
    ::close(fd);
    return e;
  }
  if (::close(fd) != 0) return io_error(tmp, "cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return io_error(path, "cannot rename temp file onto");
  if (!fsync_dir(dir_of(path))) return io_error(dir_of(path), "cannot fsync directory");
  return true;
}

Error corrupt(const std::string& path, const std::string& what) {
  return make_error(path, "checkpoint", "", "corrupted checkpoint shard: " + what,
                    "restore the file or start without --resume");
}

}  // namespace

uint64_t fnv1a64(const void* data, uint64_t bytes, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = seed;
  for (uint64_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

Result<bool> write_shard_file(const std::string& path, const std::vector<Section>& sections,
                              int64_t crash_after_bytes) {
  return write_atomic(path, serialize(sections), crash_after_bytes);
}

Result<bool> write_file_atomic(const std::string& path, const std::string& text) {
  return write_atomic(path, text, -1);
}

Result<std::vector<Section>> read_shard_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path, "checkpoint", "", "cannot open checkpoint shard",
                             "is --checkpoint-dir the directory of a finished run?");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_shard(data, path);
}

Result<std::vector<Section>> parse_shard(const std::string& data, const std::string& path) {
  size_t pos = 0;
  auto take = [&](void* dst, size_t n) {
    if (data.size() - pos < n) return false;
    std::memcpy(dst, data.data() + pos, n);
    pos += n;
    return true;
  };
  char magic[8];
  uint32_t version = 0, count = 0;
  if (!take(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return corrupt(path, "bad magic");
  if (!take(&version, 4) || version != kVersion) return corrupt(path, "unknown version");
  if (!take(&count, 4) || count > 1u << 20) return corrupt(path, "bad section count");
  // Sections are appended as they are read: a corrupt count cannot allocate more than the file holds.
  std::vector<Section> sections;
  for (uint32_t i = 0; i < count; ++i) {
    Section& s = sections.emplace_back();
    uint32_t name_len = 0;
    uint64_t bytes = 0, hash = 0;
    if (!take(&name_len, 4) || name_len > 4096) return corrupt(path, "bad section name");
    s.name.resize(name_len);
    if (!take(&s.name[0], name_len) || !take(&bytes, 8) || !take(&hash, 8))
      return corrupt(path, "truncated section header");
    if (data.size() - pos < bytes) return corrupt(path, "truncated section '" + s.name + "'");
    s.bytes.assign(data.begin() + pos, data.begin() + pos + bytes);
    pos += bytes;
    if (fnv1a64(s.bytes.data(), bytes) != hash) return corrupt(path, "checksum mismatch in '" + s.name + "'");
  }
  char trailer[8];
  if (!take(trailer, 8) || std::memcmp(trailer, kTrailer, 8) != 0 || pos != data.size())
    return corrupt(path, "bad trailer");
  return sections;
}

Section make_section(const std::string& name, const void* data, uint64_t bytes) {
  Section s;
  s.name = name;
  const auto* p = static_cast<const uint8_t*>(data);
  s.bytes.assign(p, p + bytes);
  return s;
}

const Section* find_section(const std::vector<Section>& sections, const std::string& name) {
  for (const auto& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace meshplan::exec
