// Rendering DOT text to SVG through Graphviz (libgvc/libcgraph), the only user of those libraries.
// Built only when CMake found libgvc (MESHPLAN_HAVE_GRAPHVIZ); callers check that define.
#pragma once
#include <string>

#include "core/error.h"

namespace meshplan::cli {

/// Lays `dot` out with the "dot" engine and renders SVG. `file` names the output in errors.
Result<std::string> render_dot_svg(const std::string& dot, const std::string& file);

}  // namespace meshplan::cli
