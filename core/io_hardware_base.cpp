// A hardware profile's `base:` chain resolved into one YAML mapping (hardware-profiles/README.md "Derived
// profiles").
#include "core/io_hardware_base.h"
#include "core/io_hardware_files.h"

#include <filesystem>
#include <vector>

#include "core/io.h"
#include "core/io_detail.h"

namespace meshplan::io_detail {

namespace fs = std::filesystem;

bool hardware_key_not_inherited(const std::string& key) {
  return key == "base" || key == "name" || key == "source" || key == "provenance";
}

bool names_a_profile_path(const std::string& s) {
  auto ends_with = [&](const std::string& e) {
    return s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  return s.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml") || ends_with(".json");
}

// The file a `base:` value names, or "" when there is none: a path is taken relative to the derived
// file's directory; a stem is looked up there first (a user's own family of profiles), then among the
// shipped ones.
std::string base_path(const std::string& value, const std::string& file, const std::string& profiles_dir) {
  std::error_code ec;
  const fs::path dir = fs::path(file).parent_path();
  if (names_a_profile_path(value)) {
    const fs::path p = fs::path(value).is_absolute() ? fs::path(value) : dir / value;
    return fs::is_regular_file(p, ec) ? p.string() : std::string();
  }
  for (const fs::path& d : {dir, fs::path(profiles_dir)}) {
    const fs::path p = d / (value + ".yaml");
    if (!d.empty() && fs::is_regular_file(p, ec)) return p.string();
  }
  return std::string();
}

namespace {

// `over` laid onto a copy of `under`: mappings key by key, anything else replaced whole.
YAML::Node overlay(const YAML::Node& under, const YAML::Node& over) {
  if (!under.IsMap() || !over.IsMap()) return YAML::Clone(over);
  YAML::Node out = YAML::Clone(under);
  for (const auto& kv : over) {
    const std::string key = kv.first.Scalar();
    out[key] = Reader::has(out, key) ? overlay(out[key], kv.second) : YAML::Clone(kv.second);
  }
  return out;
}

Result<YAML::Node> resolve(const std::string& text, const std::string& file, const std::string& profiles_dir,
                           std::vector<std::string>& chain) {
  auto doc = parse_yaml(text, file);
  if (!doc) return doc.error();
  YAML::Node root = doc.value();
  if (!root.IsMap() || !Reader::has(root, "base")) return root;
  const YAML::Node b = root["base"];
  const std::string value = b.IsScalar() ? b.Scalar() : node_text(b);
  if (!b.IsScalar() || value.empty())
    return make_error(file, "base", value, "must name one profile",
                      "a shipped profile's name (e.g. base: h100-80gb-sxm) or a path to a profile YAML");
  const std::string path = base_path(value, file, profiles_dir);
  if (path.empty())
    return make_error(file, "base", value, "no such profile (not next to this file, not in " + profiles_dir + ")",
                      "a shipped profile's name (e.g. base: h100-80gb-sxm) or a path relative to this file");
  std::error_code ec;
  const std::string canonical = fs::weakly_canonical(path, ec).string();
  for (const std::string& seen : chain)
    if (seen == canonical)
      return make_error(file, "base", value, "profiles name each other as base (a cycle through " + path + ")",
                        "one profile of the chain must stand on its own, without base:");
  if (static_cast<int>(chain.size()) >= kMaxHardwareBaseDepth)
    return make_error(file, "base", value,
                      "chain of bases deeper than " + std::to_string(kMaxHardwareBaseDepth) + " profiles",
                      "derive from the profile the chain ends in");
  chain.push_back(canonical);
  auto base_text = read_text_file(path);
  if (!base_text) return base_text.error();
  auto base = resolve(base_text.value(), path, profiles_dir, chain);
  if (!base) return base.error();
  if (!base.value().IsMap())
    return make_error(file, "base", value, "the base profile is not a mapping", "see hardware-profiles/README.md");
  YAML::Node inherited(YAML::NodeType::Map);
  for (const auto& kv : base.value())
    if (!hardware_key_not_inherited(kv.first.Scalar())) inherited[kv.first.Scalar()] = kv.second;
  YAML::Node own(YAML::NodeType::Map);
  for (const auto& kv : root)
    if (kv.first.Scalar() != "base") own[kv.first.Scalar()] = kv.second;
  return overlay(inherited, own);
}

}  // namespace

Result<YAML::Node> resolve_hardware_base(const std::string& text, const std::string& file,
                                         const std::string& profiles_dir) {
  std::error_code ec;
  std::vector<std::string> chain{fs::weakly_canonical(file, ec).string()};
  return resolve(text, file, profiles_dir, chain);
}

}  // namespace meshplan::io_detail

namespace meshplan {

std::vector<std::string> hardware_profile_files(const std::string& file, const std::string& profiles_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::vector<std::string> seen;
  std::error_code ec;
  std::string path = file;
  while (static_cast<int>(files.size()) <= io_detail::kMaxHardwareBaseDepth) {
    const std::string canonical = fs::weakly_canonical(path, ec).string();
    for (const std::string& s : seen)
      if (s == canonical) return files;
    seen.push_back(canonical);
    files.push_back(path);
    auto text = read_text_file(path);
    if (!text) return files;
    auto doc = io_detail::parse_yaml(text.value(), path);
    if (!doc || !doc.value().IsMap() || !io_detail::Reader::has(doc.value(), "base")) return files;
    const YAML::Node b = doc.value()["base"];
    if (!b.IsScalar()) return files;
    path = io_detail::base_path(b.Scalar(), path, profiles_dir);
    if (path.empty()) return files;
  }
  return files;
}

}  // namespace meshplan
