// DeviceError: a failed CUDA / cuBLAS / cuDNN / NCCL call. Thrown by executor/cuda (cuda_check.h);
// defined here without any CUDA header so that cli/ can catch it in every build and end the
// command with its one line and exit 1.
#pragma once
#include <stdexcept>

namespace meshplan::exec {

/// A failed device-library call, or a device state the backend cannot continue from. what() is
/// one line: "meshplan: rank R: <library> error at file:line: <call>: <library's message>".
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace meshplan::exec
