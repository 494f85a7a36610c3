// What identifies the running meshplan binary's code, for caches of what that code computes.
#pragma once
#include <string>

namespace meshplan::cli {

/// "build-id:<hex>" from the executable's GNU build-id note (the linker hashes the code into it;
/// GCC and Clang on Debian link with --build-id), else "exe:<path>:<bytes>:<mtime ns>", else "" (no
/// cache should trust an unidentified binary).
std::string binary_identity();

}  // namespace meshplan::cli
