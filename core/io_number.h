// Private to core/io*.cpp: a profile number as JSON, integral values without a fraction.
#pragma once
#include <nlohmann/json.hpp>

namespace meshplan::io_detail {

/// v/scale as a JSON number: the value scaled_text prints (io_detail.h), an integer when it is
/// integral (80, not 80.0), else the double. Shared by the hardware profile's emitters so that
/// `--format json` prints every number of a profile alike (byte-identical output).
nlohmann::ordered_json scaled_json(double v, double scale);

}  // namespace meshplan::io_detail
