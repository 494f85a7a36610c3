// render_dot_svg through gvc: parse (agmemread), layout (dot), render (svg) into memory.
#include "cli/graphviz_render.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

namespace meshplan::cli {

Result<std::string> render_dot_svg(const std::string& dot, const std::string& file) {
  GVC_t* gvc = gvContext();
  Agraph_t* g = agmemread(dot.c_str());
  if (!g) {
    gvFreeContext(gvc);
    return make_error(file, "--graph", "", "Graphviz could not parse the dependency graph", "try --dot instead");
  }
  std::string svg;
  bool ok = gvLayout(gvc, g, "dot") == 0;
  if (ok) {
    char* data = nullptr;
    unsigned int len = 0;
    ok = gvRenderData(gvc, g, "svg", &data, &len) == 0;
    if (ok) svg.assign(data, len);
    gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  gvFreeContext(gvc);
  if (!ok) return make_error(file, "--graph", "", "Graphviz layout or rendering failed", "try --dot instead");
  return svg;
}

}  // namespace meshplan::cli
