// The files a hardware profile is read from: the profile and its `base:` chain (hardware-profiles/README.md
// "Derived profiles"), for caches whose key must change when any of them does.
#pragma once
#include <string>
#include <vector>

namespace meshplan {

/// `file` followed by each base it derives from, in the order they are read (the base found next to a file,
/// then in `profiles_dir`, or a path relative to the file, as load_hardware resolves them). The list stops
/// at the first base that cannot be read or parsed (load_hardware reports that error); a cycle stops it too.
std::vector<std::string> hardware_profile_files(const std::string& file, const std::string& profiles_dir);

}  // namespace meshplan
