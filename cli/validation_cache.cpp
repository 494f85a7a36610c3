// Cache of the predicted validation runs the accuracy notes read (cli/validation_cache.h).
#include "cli/validation_cache.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/binary_identity.h"
#include "cli/cache_files.h"
#include "core/io.h"
#include "core/io_hardware_files.h"

namespace meshplan::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kSchema = "meshplan-validation-notes/1";

// FNV-1a, 64-bit; two offset bases give a 128-bit key (a cache key, not a defence against anyone).
struct Fnv128 {
  uint64_t a = 14695981039346656037ull, b = 0x6c62272e07bb0142ull;
  void add(const std::string& s) {
    for (unsigned char c : s) {
      a = (a ^ c) * 1099511628211ull;
      b = (b ^ c) * 1099511628211ull;
    }
    const unsigned char end = 0xff;  // separates fields: ("ab","c") and ("a","bc") differ
    a = (a ^ end) * 1099511628211ull;
    b = (b ^ end) * 1099511628211ull;
  }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
  }
};

void add_yaml_files(Fnv128& h, const std::string& dir) {
  h.add(dir);
  for (const std::string& f : list_yaml_files(dir)) {
    h.add(fs::path(f).filename().string());
    h.add(read_cache_file(f));
  }
}

// A profile's bases (hardware-profiles/README.md "Derived profiles") may lie outside its directory (a path
// such as base: ../shared/h100.yaml): each profile's chain beyond itself is hashed too.
void add_profile_bases(Fnv128& h, const std::string& profiles_dir) {
  for (const std::string& f : list_yaml_files(profiles_dir)) {
    const std::vector<std::string> chain = hardware_profile_files(f, profiles_dir);
    for (size_t i = 1; i < chain.size(); ++i) {
      h.add(chain[i]);
      h.add(read_cache_file(chain[i]));
    }
  }
}

std::string cache_path(const std::string& validation_dir, const std::string& profiles_dir) {
  // One file per binary path and pair of directories, overwritten when their content or the binary
  // changes: a rebuilt binary replaces its own entry, and two builds (release, sanitizer) keep theirs.
  std::error_code ec;
  Fnv128 h;
  h.add(fs::read_symlink("/proc/self/exe", ec).string());
  h.add(validation_dir);
  h.add(profiles_dir);
  return cache_dir() + "/validation-" + h.hex().substr(0, 16) + ".json";
}

std::string to_text(const NoteRuns& n, const std::string& key) {
  json runs = json::array();
  for (size_t i = 0; i < n.runs.size(); ++i) {
    const RunPrediction& r = n.runs[i];
    const Regime& g = n.regimes[i];
    runs.push_back({r.set, r.label, r.error, r.tuning, r.regression, r.skipped, g.moe, g.zero3, g.dp_band,
                    n.hardware[i], n.routing[i]});
  }
  return json{{"schema", kSchema}, {"key", key}, {"runs", runs}}.dump() + "\n";
}

// The cached runs, or false on any mismatch or malformed entry (then the caller recomputes).
bool from_text(const std::string& text, const std::string& key, NoteRuns& out) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != kSchema || j.value("key", "") != key) return false;
  const auto it = j.find("runs");
  if (it == j.end() || !it->is_array()) return false;
  for (const json& e : *it) {
    if (!e.is_array() || e.size() != 11 || !e[0].is_string() || !e[1].is_string() || !e[2].is_number() ||
        !e[3].is_boolean() || !e[4].is_string() || !e[5].is_string() || !e[6].is_boolean() || !e[7].is_boolean() ||
        !e[8].is_number_integer() || !e[9].is_string() || !e[10].is_string())
      return false;
    RunPrediction r;
    r.set = e[0].get<std::string>();
    r.label = e[1].get<std::string>();
    r.error = e[2].get<double>();
    r.tuning = e[3].get<bool>();
    r.regression = e[4].get<std::string>();
    r.skipped = e[5].get<std::string>();
    Regime g;
    g.moe = e[6].get<bool>();
    g.zero3 = e[7].get<bool>();
    g.dp_band = e[8].get<int>();
    out.runs.push_back(std::move(r));
    out.regimes.push_back(g);
    out.hardware.push_back(e[9].get<std::string>());
    out.routing.push_back(e[10].get<std::string>());
  }
  return true;
}

}  // namespace

std::string note_runs_key(const std::string& validation_dir, const std::string& profiles_dir) {
  const std::string binary = binary_identity();
  if (binary.empty()) return "";
  Fnv128 h;
  h.add(binary);
  add_yaml_files(h, validation_dir);
  add_yaml_files(h, profiles_dir);
  add_profile_bases(h, profiles_dir);
  return binary + "/" + h.hex();
}

NoteRuns cached_note_runs(const std::string& validation_dir, const std::string& profiles_dir,
                          const std::function<NoteRuns()>& compute) {
  const std::string key = note_runs_key(validation_dir, profiles_dir);
  if (key.empty()) return compute();
  const std::string path = cache_path(validation_dir, profiles_dir);
  NoteRuns cached;
  if (from_text(read_cache_file(path), key, cached)) return cached;
  NoteRuns fresh = compute();
  write_cache_file(path, to_text(fresh, key));
  return fresh;
}

}  // namespace meshplan::cli
