// Loading and saving specs (model files, hardware profiles) as YAML/JSON; the only yaml-cpp/json user in core.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"

namespace meshplan {

/// Reads a whole file; a missing/unreadable file is an Error naming it.
Result<std::string> read_text_file(const std::string& path);

/// Paths of the regular `*.yaml` files directly in `dir`, sorted (a directory listing's order is the
/// file system's: sorting keeps every walk over validation/ and hardware-profiles/ byte-reproducible).
/// Empty when `dir` cannot be listed.
std::vector<std::string> list_yaml_files(const std::string& dir);

/// The checks every structured input passes before a parser sees it: UTF-8 text and a nesting
/// depth of at most limits::kMaxNestingDepth. Returns the Error naming the line, or nullopt.
std::optional<Error> check_text_input(const std::string& text, const std::string& file);

/// Parses a model file's text (YAML or JSON; Hugging Face config.json or GPT-2 keys; DESIGN.md
/// "Model files"). `file` is used in messages and for the default name (file stem).
Result<ModelSpec> parse_model(const std::string& text, const std::string& file);
Result<ModelSpec> load_model(const std::string& path);

/// Top-level keys of a model file's text that meshplan neither reads, nor knows not to change the
/// parameter count, nor refuses (accepted and ignored): what a new family's config would add.
/// Empty when the text does not parse as a mapping.
std::vector<std::string> unclassified_model_keys(const std::string& text);

/// Hugging Face keys (+ name, source, mlp) as a JSON object text; parse_model reads it back.
std::string model_to_json(const ModelSpec& m);

/// Parses a hardware profile (YAML schema in hardware-profiles/README.md). A `base:` key is refused here:
/// only load_hardware has a file and a profiles directory to find the base in.
Result<HardwareProfile> parse_hardware(const std::string& text, const std::string& file);
/// `name_or_path`: an existing file path, or a profile stem looked up in `profiles_dir`. A profile with
/// `base: OTHER` is OTHER's keys overlaid with its own (hardware-profiles/README.md "Derived profiles").
Result<HardwareProfile> load_hardware(const std::string& name_or_path, const std::string& profiles_dir);

/// Profile as YAML in the same schema parse_hardware reads (round-trips). Deterministic key order.
std::string hardware_to_yaml(const HardwareProfile& hw);
/// The same profile as a JSON object text (same keys; parse_hardware reads it back).
std::string hardware_to_json(const HardwareProfile& hw);

/// Any JSON text re-emitted with 2-space indentation, keys in the JSON's order, lists of scalars on
/// one line and every float in its shortest round-trip form (nlohmann's dump may print 17 digits).
/// Ends with a newline. Invalid JSON is a bug of the caller (assert). Used by every JSON report.
std::string format_json(const std::string& json_text);

/// Any JSON text re-emitted as block YAML, keys in the JSON's order (deterministic). Invalid JSON
/// is a bug of the caller (assert); used by every `--format yaml` report.
std::string json_to_yaml(const std::string& json_text);

/// Stems of the *.yaml profiles in `profiles_dir`, sorted (for "unknown profile" hints and listings).
std::vector<std::string> list_profiles(const std::string& profiles_dir);

}  // namespace meshplan
