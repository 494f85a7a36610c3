// User-facing errors as values (file, field, value, hint) and Result<T>; bugs are asserts instead.
#pragma once
#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace meshplan {

/// A problem with the user's input: what file and field, the value at fault, what would fix it.
/// Printed by the CLI as one line; exit code 2.
struct Error {
  std::string file;     // path, or "command line" for flags
  std::string field;    // key or flag name, e.g. "num_attention_heads" or "--tp"
  std::string value;    // the offending value as the user wrote it (may be empty)
  std::string message;  // what is wrong
  std::string hint;     // what would fix it (may be empty)

  /// "file: field=value: message (hint: ...)" on one line.
  std::string one_line() const;
};

Error make_error(std::string file, std::string field, std::string value, std::string message,
                 std::string hint = "");

/// Either a value or an Error. Small and explicit; exceptions never cross module boundaries.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T& value() & { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// validate() functions collect every reason, not just the first.
using ErrorList = std::vector<Error>;

}  // namespace meshplan
