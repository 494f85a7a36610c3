// Typed YAML reads with Errors (io_detail::Reader), file reading and round-trip number text.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>
#include <sys/stat.h>

#include "core/io.h"
#include "core/io_detail.h"
#include "core/limits.h"
#include "core/utf8.h"

namespace meshplan {

std::vector<std::string> list_yaml_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::string> read_text_file(const std::string& path) {
  // Only regular files: a FIFO, a device (/dev/zero) or a directory would block or never end.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const std::string why = std::strerror(errno);
    return make_error(path, "file", path, "cannot be read (" + why + ")",
                      "check the path (shipped: examples/models/, hardware-profiles/)");
  }
  if (!S_ISREG(st.st_mode))
    return make_error(path, "file", path, "is not a regular file (a FIFO, device or directory)",
                      "pass a regular file");
  if (st.st_size > limits::kMaxInputFileBytes)
    return make_error(path, "file", std::to_string(st.st_size) + " bytes",
                      "is too large (accepted 0.." + std::to_string(limits::kMaxInputFileBytes) + " bytes)",
                      "input files are small text files");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string why = std::strerror(errno);
    return make_error(path, "file", path, "cannot be read (" + why + ")",
                      "check the path (shipped: examples/models/, hardware-profiles/)");
  }
  // Read at most the size stat gave (+1 to notice a file that grew since): memory stays bounded.
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<int64_t>(text.size()) > st.st_size)
    return make_error(path, "file", path, "changed while being read", "read it again");
  return text;
}

}  // namespace meshplan

namespace meshplan::io_detail {

static std::string line_of(const std::string& text, int line0) {
  std::istringstream in(text);
  std::string line;
  for (int i = 0; std::getline(in, line); ++i)
    if (i == line0) break;
  const size_t b = line.find_first_not_of(" \t");
  line = b == std::string::npos ? "" : line.substr(b);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line.size() > 60 ? line.substr(0, 57) + "..." : line;
}

// Nesting depth of YAML/JSON text, over-approximated without parsing: open flow brackets outside
// quotes, plus block indentation levels, plus "- " sequence markers that start a line. yaml-cpp
// recurses once per level, so an absurd depth must be refused before it parses.
static int nesting_depth(const std::string& text, int& line_of_max) {
  std::vector<size_t> indents;
  int flow = 0, max_depth = 0, line = 1;
  char quote = 0;
  bool line_start = true;
  size_t indent = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') { ++line; line_start = true; indent = 0; quote = 0; continue; }
    if (line_start) {
      if (c == ' ') { ++indent; continue; }
      line_start = false;
      if (c == '#') {  // a comment line: brackets and quotes in it mean nothing
        while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
        continue;
      }
      if (c == '\r') continue;
      while (!indents.empty() && indents.back() >= indent) indents.pop_back();
      indents.push_back(indent);
      int dashes = 0;
      for (size_t k = i; k + 1 < text.size() && text[k] == '-' && (text[k + 1] == ' '); k += 2) ++dashes;
      const int d = flow + static_cast<int>(indents.size()) + dashes;
      if (d > max_depth) max_depth = d, line_of_max = line;
    }
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '#' && (i == 0 || text[i - 1] == ' ')) { while (i + 1 < text.size() && text[i + 1] != '\n') ++i; }
    else if (c == '[' || c == '{') {
      ++flow;
      const int d = flow + static_cast<int>(indents.size());
      if (d > max_depth) max_depth = d, line_of_max = line;
    } else if ((c == ']' || c == '}') && flow > 0) --flow;
  }
  return max_depth;
}

static int line_of_offset(const std::string& text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

}  // namespace meshplan::io_detail

namespace meshplan {

std::optional<Error> check_text_input(const std::string& text, const std::string& file) {
  const size_t bad = invalid_utf8_offset(text);
  if (bad != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[bad]));
    return make_error(file, "line " + std::to_string(io_detail::line_of_offset(text, bad)), byte,
                      "is not UTF-8 text (byte " + std::to_string(bad) + ")", "save the file as UTF-8");
  }
  // YAML and JSON text holds no C0 control byte but tab, LF and CR (YAML 1.2 c-printable, RFC 8259
  // whitespace); yaml-cpp turns a NUL into a byte that is not UTF-8 (0x85), which JSON output cannot hold.
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') continue;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", c);
    return make_error(file, "line " + std::to_string(io_detail::line_of_offset(text, i)), byte,
                      "is a control character (byte " + std::to_string(i) + "), which YAML and JSON text may not hold",
                      "remove it, or write it as an escape inside a quoted string");
  }
  int deep_line = 0;
  const int depth = io_detail::nesting_depth(text, deep_line);
  if (depth > limits::kMaxNestingDepth)
    return make_error(file, "line " + std::to_string(deep_line), std::to_string(depth) + " levels",
                      "nesting too deep (accepted 1.." + std::to_string(limits::kMaxNestingDepth) + " levels)",
                      "model, hardware and plan files are a few levels deep");
  return std::nullopt;
}

}  // namespace meshplan

namespace meshplan::io_detail {

Result<YAML::Node> parse_yaml(const std::string& text, const std::string& file) {
  if (auto bad = check_text_input(text, file)) return *bad;
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const int line0 = e.mark.line;  // 0-based; -1 when unknown
    std::string field = line0 >= 0 ? "line " + std::to_string(line0 + 1) : "yaml";
    return make_error(file, field, line0 >= 0 ? line_of(text, line0) : "",
                      "YAML syntax error: " + e.msg,
                      "check indentation, colons and brackets near that line");
  }
}

std::string file_stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::string node_text(const YAML::Node& n) {
  std::string s;
  if (n.IsScalar()) {
    s = n.Scalar();
  } else {
    YAML::Emitter out;
    out << YAML::Flow << n;
    s = out.c_str();
  }
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::vector<double> positive_number_list(Reader& r, const YAML::Node& map, const char* key, const std::string& at,
                                         const std::string& example, bool non_empty) {
  std::vector<double> out;
  if (!Reader::has(map, key)) {
    r.fail(at, "", "missing required key", example);
    return out;
  }
  const YAML::Node list = map[key];
  if (!list.IsSequence() || (non_empty && list.size() == 0)) {
    r.fail(at, node_text(list), non_empty ? "must be a non-empty list of numbers" : "must be a list of numbers",
           example);
    return out;
  }
  for (size_t i = 0; i < list.size() && r.ok(); ++i) {
    const std::string where = at + "[" + std::to_string(i) + "]";
    double v = 0.0;
    try {
      v = list[i].as<double>();
    } catch (const YAML::Exception&) {
      r.fail(where, node_text(list[i]), "must be a number", example);
      break;
    }
    if (!(v > 0.0) || !std::isfinite(v)) r.fail(where, node_text(list[i]), "must be positive", example);
    out.push_back(v);
  }
  return out;
}

std::vector<double> ascending_number_list(Reader& r, const YAML::Node& map, const char* key, const std::string& at,
                                          const std::string& example, bool non_empty, const std::string& hint) {
  std::vector<double> out = positive_number_list(r, map, key, at, example, non_empty);
  for (size_t i = 1; r.ok() && i < out.size(); ++i)
    if (!(out[i] > out[i - 1]))
      r.fail(at + "[" + std::to_string(i) + "]", scaled_text(out[i], 1.0), "must be larger than the one before", hint);
  return out;
}

bool Reader::has(const YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return false;
  YAML::Node v = map[key];
  return v.IsDefined() && !v.IsNull();
}

std::string Reader::first_present(const YAML::Node& map, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (has(map, k)) return k;
  return "";
}

void Reader::fail(const std::string& field, const std::string& value, const std::string& message,
                  const std::string& hint) {
  if (!error) error = make_error(file_, field, value, message, hint);
}

const YAML::Node* Reader::scalar(const YAML::Node& map, const std::string& key,
                                 const std::string& path, bool required, const std::string& hint,
                                 const char* kind) {
  // Rebound with reset(), never assigned: yaml-cpp's Node::operator= on a bound node re-points the node it
  // held (set_ref: the previous key's value in its document becomes this one) and merges the two documents'
  // memory, so every document read stayed allocated (tests/core/test_io_reader.cpp). Holds one document.
  thread_local YAML::Node holder;
  if (error) return nullptr;
  if (!has(map, key)) {
    if (required) fail(path, "", "missing required key", hint);
    return nullptr;
  }
  holder.reset(map[key]);
  if (!holder.IsScalar()) {
    fail(path, node_text(holder), std::string("must be ") + kind, hint);
    return nullptr;
  }
  return &holder;
}

static bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

static bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

int64_t Reader::integer(const YAML::Node& map, const std::string& key, const std::string& path,
                        std::optional<int64_t> dflt, const std::string& hint) {
  const YAML::Node* n = scalar(map, key, path, !dflt.has_value(), hint, "an integer");
  if (!n) return dflt.value_or(0);
  int64_t v = 0;
  if (!parse_int(n->Scalar(), v)) {
    fail(path, node_text(*n), "must be an integer", hint);
    return dflt.value_or(0);
  }
  return v;
}

double Reader::number(const YAML::Node& map, const std::string& key, const std::string& path,
                      std::optional<double> dflt, const std::string& hint) {
  const YAML::Node* n = scalar(map, key, path, !dflt.has_value(), hint, "a number");
  if (!n) return dflt.value_or(0.0);
  double v = 0.0;
  if (!parse_double(n->Scalar(), v)) {
    fail(path, node_text(*n), "must be a number", hint);
    return dflt.value_or(0.0);
  }
  return v;
}

std::string Reader::text(const YAML::Node& map, const std::string& key, const std::string& path,
                         std::optional<std::string> dflt, const std::string& hint) {
  const YAML::Node* n = scalar(map, key, path, !dflt.has_value(), hint, "a string");
  if (!n) return dflt.value_or("");
  // An escape in a double-quoted scalar ("\x85") can still yield bytes that are not UTF-8; every string
  // read here may reach JSON output, which refuses them.
  if (invalid_utf8_offset(n->Scalar()) != std::string::npos) {
    fail(path, "", "is not UTF-8 text once its escapes are read", "write the character itself, UTF-8 encoded");
    return dflt.value_or("");
  }
  return n->Scalar();
}

bool Reader::boolean(const YAML::Node& map, const std::string& key, const std::string& path,
                     std::optional<bool> dflt, const std::string& hint) {
  const YAML::Node* n = scalar(map, key, path, !dflt.has_value(), hint, "true or false");
  if (!n) return dflt.value_or(false);
  const std::string& s = n->Scalar();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  fail(path, node_text(*n), "must be true or false", hint);
  return dflt.value_or(false);
}

YAML::Node Reader::map(const YAML::Node& parent, const std::string& key, const std::string& path,
                       bool optional, const std::string& hint) {
  if (error) return YAML::Node(YAML::NodeType::Map);
  if (!has(parent, key)) {
    if (!optional) fail(path, "", "missing required key", hint);
    return YAML::Node(YAML::NodeType::Map);
  }
  YAML::Node n = parent[key];
  if (!n.IsMap()) {
    fail(path, node_text(n), "must be a mapping of keys", hint);
    return YAML::Node(YAML::NodeType::Map);
  }
  return n;
}

std::string scaled_text(double v, double scale) {
  char buf[64];
  const double x = v / scale;
  if (x == std::floor(x) && std::fabs(x) < 1e15) {  // integral: "80", never "8e+01"
    std::snprintf(buf, sizeof buf, "%.0f", x);
    if (std::strtod(buf, nullptr) * scale == v) return buf;
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v / scale);
    if (std::strtod(buf, nullptr) * scale == v) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.17g", v / scale);
  return buf;
}

double scaled_value(double v, double scale) { return std::strtod(scaled_text(v, scale).c_str(), nullptr); }

}  // namespace meshplan::io_detail
