#pragma once
// What an event's name says about it: the name patterns the detectors and the idle-cause
// attribution rely on, in one place (docs/analysis.md lists them).
#include <string_view>

namespace stallscope::analysis::names {

bool containsNoCase(std::string_view s, std::string_view p); // ASCII case-insensitive find
bool isProfilerStep(std::string_view name);            // ProfilerStep#N
int64_t profilerStepNumber(std::string_view name);     // N, or -1
bool isDataLoader(std::string_view name);              // enumerate(DataLoader)#..., enumerate(DataPipe)#...
bool isInputPreparation(std::string_view name);        // tokenisers, processors, transforms, decoding, collate
bool isOptimizer(std::string_view name);               // Optimizer.step#..., Optimizer.zero_grad#...
bool isIoLoggingCheckpoint(std::string_view name);     // torch.save, serialisation, writes, print/logging
// Backward-pass events: autograd nodes ("...Backward0"), "aten::*_backward", the autograd
// engine, Tensor.backward frames
bool isBackward(std::string_view name);
// Host calls (launch, copy, sync, allocation, ...) and torch.compile's phases are classified
// by the call catalogue (call_catalogue.h, analysis/data/call_catalogue.txt), not here.
// "Torch-Compiled Region: 3/1": compiled frame 3, its compile 1 (a recompilation)
bool isCompiledRegion(std::string_view name);
// cudaStreamBeginCapture, hipStreamBeginCapture, cuStreamBeginCapture
bool isCaptureBegin(std::string_view name);
bool isCaptureEnd(std::string_view name); // ...EndCapture
// Kernels (family, precision, Tensor Cores) are classified by the kernel catalogue
// (kernel_catalogue.h, analysis/data/kernel_catalogue.txt), not here.

} // namespace stallscope::analysis::names
