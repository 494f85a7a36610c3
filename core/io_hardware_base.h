// Private to core/io_hardware*.cpp: a hardware profile's `base:` chain (a profile written as another
// profile plus the keys that differ) resolved into one YAML mapping.
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>

#include "core/error.h"

namespace meshplan::io_detail {

/// Keys a derived profile never takes from its base: each file names and cites itself.
bool hardware_key_not_inherited(const std::string& key);

/// True when a profile reference (--hardware, base:) is a path rather than a profile name: it has a '/'
/// or ends in .yaml, .yml or .json.
bool names_a_profile_path(const std::string& s);

/// The file a `base:` value names, or "" when there is none: a path is taken relative to `file`'s directory;
/// a stem is looked up next to `file` first (a user's own family of profiles), then in `profiles_dir`.
std::string base_path(const std::string& value, const std::string& file, const std::string& profiles_dir);

/// The profile text of `file` with its `base:` applied: the base profile's mapping (its own base applied
/// first, at most kMaxHardwareBaseDepth files deep), overlaid key by key with this file's (mappings merge
/// recursively; scalars and lists replace), less `base` and the base's name, source and provenance. A
/// base is a profile stem looked up next to `file`, then in `profiles_dir`, or a path (with '/' or a .yaml /
/// .yml / .json ending) relative to `file`'s directory. A text without `base:` comes back as parsed. Errors
/// (a missing base, a cycle, a chain too deep, a base that is not a mapping) name `file`, the `base` key and
/// the value at fault.
Result<YAML::Node> resolve_hardware_base(const std::string& text, const std::string& file,
                                         const std::string& profiles_dir);

inline constexpr int kMaxHardwareBaseDepth = 8;

}  // namespace meshplan::io_detail
