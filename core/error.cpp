// Formatting of user-facing errors.
#include "core/error.h"

namespace meshplan {

std::string Error::one_line() const {
  std::string s = file.empty() ? std::string("error") : file;
  s += ": ";
  if (!field.empty()) {
    s += field;
    // A value can be a whole file's worth of text (a hostile one): the line stays readable.
    if (!value.empty()) s += "=" + (value.size() > 120 ? value.substr(0, 117) + "..." : value);
    s += ": ";
  }
  s += message;
  if (!hint.empty()) s += " (hint: " + hint + ")";
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

Error make_error(std::string file, std::string field, std::string value, std::string message,
                 std::string hint) {
  return Error{std::move(file), std::move(field), std::move(value), std::move(message),
               std::move(hint)};
}

}  // namespace meshplan
