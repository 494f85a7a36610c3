// Shard files: named binary sections with per-section FNV-1a checksums, written atomically
// (temp file, fsync, rename, fsync of the directory) and read back with every defect an Error.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace meshplan::exec {

/// One named blob. Layout on disk (little-endian): u32 name length, name, u64 byte count,
/// u64 FNV-1a 64 of the bytes, the bytes.
struct Section {
  std::string name;
  std::vector<uint8_t> bytes;
};

/// File = "MSHPCKPT" + u32 version (1) + u32 section count + sections + "ENDSHARD".
/// Writes `path`.tmp, fsyncs it, renames it over `path` and fsyncs the directory, so a reader sees
/// either the old file or the whole new one. `crash_after_bytes` >= 0 is a test hook: the process
/// SIGKILLs itself once that many bytes of the temp file are written and synced.
Result<bool> write_shard_file(const std::string& path, const std::vector<Section>& sections,
                              int64_t crash_after_bytes = -1);

/// Reads and verifies a shard file (magic, version, sizes, checksums, trailer).
Result<std::vector<Section>> read_shard_file(const std::string& path);

/// The same checks on a shard's bytes already in memory; `path` names it in errors (fuzzed).
Result<std::vector<Section>> parse_shard(const std::string& data, const std::string& path);

/// Writes `text` to `path` atomically (temp file, fsync, rename, fsync directory).
Result<bool> write_file_atomic(const std::string& path, const std::string& text);

/// FNV-1a 64-bit hash (also used for fingerprints).
uint64_t fnv1a64(const void* data, uint64_t bytes, uint64_t seed = 14695981039346656037ull);

/// Section helpers: raw copies of plain values and float arrays.
Section make_section(const std::string& name, const void* data, uint64_t bytes);
const Section* find_section(const std::vector<Section>& sections, const std::string& name);

}  // namespace meshplan::exec
