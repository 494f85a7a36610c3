// The running binary's GNU build id, or its path, size and modification time (cli/binary_identity.h).
#include "cli/binary_identity.h"

#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace meshplan::cli {

namespace {

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

// Walks the main program's PT_NOTE segments (dl_iterate_phdr lists it first, with an empty name) for
// an NT_GNU_BUILD_ID note: ElfW(Nhdr), the 4-byte-aligned name "GNU\0", then the id's bytes.
int find_build_id(dl_phdr_info* info, size_t, void* out_void) {
  auto* out = static_cast<std::string*>(out_void);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    size_t left = ph.p_memsz;
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const size_t size = sizeof nh + align4(nh.n_namesz) + align4(nh.n_descsz);
      if (size > left) break;
      const unsigned char* name = p + sizeof nh;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        const unsigned char* id = name + align4(nh.n_namesz);
        for (size_t k = 0; k < nh.n_descsz; ++k) {
          char hex[3];
          std::snprintf(hex, sizeof hex, "%02x", id[k]);
          *out += hex;
        }
        return 1;
      }
      p += size;
      left -= size;
    }
  }
  return 1;  // only the first object (the executable) is asked
}

}  // namespace

std::string binary_identity() {
  std::string id;
  dl_iterate_phdr(find_build_id, &id);
  if (!id.empty()) return "build-id:" + id;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  struct stat st;
  if (ec || stat(exe.c_str(), &st) != 0) return "";
  const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return "exe:" + exe.string() + ":" + std::to_string(st.st_size) + ":" + std::to_string(mtime_ns);
}

}  // namespace meshplan::cli
