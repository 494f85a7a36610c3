// format_json / json_to_yaml: canonical JSON and block YAML from JSON text (shortest round-trip floats).
#include <nlohmann/json.hpp>

#include <cassert>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/io.h"
#include "core/io_detail.h"

namespace meshplan {

using ojson = nlohmann::ordered_json;

static bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* reserved[] = {"true", "false", "null", "yes", "no", "on", "off", "~",
                                   "True", "False", "Null", "Yes", "No", "On", "Off", "NULL",
                                   "TRUE", "FALSE", "YES", "NO", "ON", "OFF", "y", "n", "Y", "N"};
  for (const char* r : reserved)
    if (s == r) return true;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return true;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == '/' || c == ' '))
      return true;
  return s.back() == ' ';
}

// Shortest "%.Ng" text that reads back as exactly `v`, integral values as integers ("80", never
// "8e+01"): the same text every profile emitter prints (io_detail.h scaled_text).
static std::string shortest(double v) { return io_detail::scaled_text(v, 1.0); }

static std::string json_scalar(const ojson& v) {
  return v.is_number_float() && std::isfinite(v.get<double>()) ? shortest(v.get<double>()) : v.dump();
}

static std::string scalar(const ojson& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return needs_quotes(s) ? v.dump() : s;  // JSON string escapes are valid YAML double-quoted
  }
  return json_scalar(v);  // numbers, booleans, null
}

static bool is_flow_leaf(const ojson& v) {
  if (v.is_primitive()) return true;
  if (v.empty()) return true;  // {} or []
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (!x.is_primitive()) return false;
  return true;
}

static std::string flow(const ojson& v) {
  if (v.is_primitive()) return scalar(v);
  if (v.empty()) return v.is_array() ? "[]" : "{}";
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + scalar(v[i]);
  return s + "]";
}

static void emit(const ojson& v, int indent, std::string& out);

static void emit_map(const ojson& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string key = needs_quotes(it.key()) ? ojson(it.key()).dump() : it.key();
    if (is_flow_leaf(it.value())) {
      out += pad + key + ": " + flow(it.value()) + "\n";
    } else {
      out += pad + key + ":\n";
      emit(it.value(), indent + 2, out);
    }
  }
}

static void emit_list(const ojson& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  for (const auto& x : v) {
    if (is_flow_leaf(x)) {
      out += pad + "- " + flow(x) + "\n";
    } else {
      std::string inner;
      emit(x, indent + 2, inner);
      out += pad + "- " + inner.substr(indent + 2);  // first line joins the dash
    }
  }
}

static void emit(const ojson& v, int indent, std::string& out) {
  if (v.is_object()) {
    emit_map(v, indent, out);
  } else if (v.is_array()) {
    emit_list(v, indent, out);
  } else {
    out += std::string(indent, ' ') + scalar(v) + "\n";
  }
}

static bool primitive_list(const ojson& v) {
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (!x.is_primitive()) return false;
  return true;
}

static void emit_json(const ojson& v, int indent, std::string& out) {
  if (v.is_primitive()) {
    out += json_scalar(v);
  } else if (v.empty()) {
    out += v.is_array() ? "[]" : "{}";
  } else if (primitive_list(v)) {
    out += "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_scalar(v[i]);
    out += "]";
  } else {
    const std::string pad(indent + 2, ' ');
    out += v.is_array() ? "[\n" : "{\n";
    size_t i = 0;
    for (auto it = v.begin(); it != v.end(); ++it, ++i) {
      out += pad;
      if (v.is_object()) out += ojson(it.key()).dump() + ": ";
      emit_json(it.value(), indent + 2, out);
      out += i + 1 < v.size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + (v.is_array() ? "]" : "}");
  }
}

std::string format_json(const std::string& json_text) {
  ojson v = ojson::parse(json_text, nullptr, /*allow_exceptions=*/false);
  assert(!v.is_discarded() && "format_json: caller passed invalid JSON");
  std::string out;
  emit_json(v, 0, out);
  return out + "\n";
}

std::string json_to_yaml(const std::string& json_text) {
  ojson v = ojson::parse(json_text, nullptr, /*allow_exceptions=*/false);
  assert(!v.is_discarded() && "json_to_yaml: caller passed invalid JSON");
  if (is_flow_leaf(v)) return flow(v) + "\n";
  std::string out;
  emit(v, 0, out);
  return out;
}

}  // namespace meshplan
