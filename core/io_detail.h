// Private to core/io*.cpp: typed reads of YAML nodes that record the first Error, and number text.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace meshplan::io_detail {

/// Parses YAML or JSON text; a syntax error becomes an Error naming the line and its text.
Result<YAML::Node> parse_yaml(const std::string& text, const std::string& file);

/// Runs a parser, turning any yaml-cpp exception it still throws (a node of an unexpected kind deep
/// inside) into an Error naming the file, so that no exception leaves core.
template <class T, class F>
Result<T> guarded(const std::string& file, F&& parse) {
  try {
    return parse();
  } catch (const YAML::Exception& e) {
    return make_error(file, "yaml", "", "unexpected structure: " + e.msg,
                      "compare with the shipped examples (examples/models/, hardware-profiles/)");
  }
}

/// "stem" of "dir/stem.yaml".
std::string file_stem(const std::string& path);

/// Reads typed values out of YAML maps. The first problem is kept in `error` and later reads
/// return their defaults, so parsers read straight through and check `error` once at the end.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  /// True when `map[key]` exists and is not null.
  static bool has(const YAML::Node& map, const std::string& key);
  /// The first of `keys` present in `map`, or "" when none is.
  static std::string first_present(const YAML::Node& map, std::initializer_list<const char*> keys);

  /// `path` is the field name printed in errors (e.g. "gpu.memory_gb"). When `dflt` is empty the key
  /// is required; a missing required key records "missing required key" with `hint`.
  int64_t integer(const YAML::Node& map, const std::string& key, const std::string& path,
                  std::optional<int64_t> dflt, const std::string& hint);
  double number(const YAML::Node& map, const std::string& key, const std::string& path,
                std::optional<double> dflt, const std::string& hint);
  std::string text(const YAML::Node& map, const std::string& key, const std::string& path,
                   std::optional<std::string> dflt, const std::string& hint);
  bool boolean(const YAML::Node& map, const std::string& key, const std::string& path,
               std::optional<bool> dflt, const std::string& hint);
  /// A nested map (required unless `optional`); returns an undefined-safe empty node when absent.
  YAML::Node map(const YAML::Node& parent, const std::string& key, const std::string& path,
                 bool optional, const std::string& hint);

  void fail(const std::string& field, const std::string& value, const std::string& message,
            const std::string& hint);
  bool ok() const { return !error.has_value(); }
  const std::string& file() const { return file_; }

  std::optional<Error> error;

 private:
  const YAML::Node* scalar(const YAML::Node& map, const std::string& key, const std::string& path,
                           bool required, const std::string& hint, const char* kind);
  std::string file_;
};

/// One-line rendering of any node for error messages (truncated).
std::string node_text(const YAML::Node& n);

/// map[key] as a list of positive finite numbers (`at` names it in errors, `example` is the hint):
/// empty, with the failure recorded in `r`, when the key is missing, the node is not a list (or an
/// empty one where `non_empty`), or an element is not a positive number. The profile tables
/// (attention_kernel_speed, fp8_rowwise_speedup) read their axes and values with it.
std::vector<double> positive_number_list(Reader& r, const YAML::Node& map, const char* key, const std::string& at,
                                         const std::string& example, bool non_empty);

/// positive_number_list, strictly ascending: the first element not larger than the one before is a
/// failure at `at`[i] with `hint` (the tables' sequence-length and size axes).
std::vector<double> ascending_number_list(Reader& r, const YAML::Node& map, const char* key, const std::string& at,
                                          const std::string& example, bool non_empty, const std::string& hint);

}  // namespace meshplan::io_detail
namespace meshplan {
struct ValidationRun;
}
namespace meshplan::io_detail {

/// A validation run's layers_per_stage, mtp_layers and moe_dispatcher keys (core/io_validation_layout.cpp).
void read_run_layout(Reader& r, const YAML::Node& n, const std::string& path, ValidationRun& run);
/// recompute_modules (core/io_validation_megatron_lists.cpp).
void read_run_recompute(Reader& r, const YAML::Node& n, const std::string& path, ValidationRun& run);
/// cuda_graphs (core/io_validation_megatron_lists.cpp).
void read_run_graphs(Reader& r, const YAML::Node& n, const std::string& path, ValidationRun& run);

/// Shortest decimal text of v/scale such that parsing it and multiplying by `scale` gives v back
/// exactly: "80" for 80e9 bytes at scale 1e9. Deterministic, round-trip safe.
std::string scaled_text(double v, double scale);
/// The number that scaled_text prints, as a double (for JSON emitters).
double scaled_value(double v, double scale);

}  // namespace meshplan::io_detail
