// The quick selftest `run` and `calibrate --backend cuda` do before using the device: silent when
// every check holds, else the table and one line on stderr and the command ends with exit 1.
#pragma once
#include "executor/backend.h"

namespace meshplan::cli {

/// True when `backend` is not a device backend or passes its selftest; otherwise prints the
/// table and the failing check's line on stderr (every failing rank prints its own) and returns false.
bool device_selftest_passes(exec::Backend& backend);

}  // namespace meshplan::cli
