#pragma once
// A tiny, fixed sequence of LibTorch operators with known names and shapes, for checking
// that a recorder sees what ran (the unit tests use it; no LibTorch header needed here).
#include <string>

namespace stallscope::torchrec {

/// Runs on the calling thread, inside a user range named `rangeName`:
///   x = ones([8, 16], requires_grad), w = ones([16, 4], requires_grad)
///   y = mm(x, w); z = relu(y); s = sum(z); s.backward()
/// so the recorder sees aten::mm with input shapes [[8, 16], [16, 4]], aten::relu [[8, 4]],
/// aten::sum, and the backward nodes (MmBackward0 carries aten::mm's sequence number).
/// Returns s (512) or -1 when LibTorch threw.
double runSampleOperators(const std::string& rangeName = "stallscope.sample_ops");

} // namespace stallscope::torchrec
