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
bool isSyncCall(std::string_view name);                // waits for the GPU: stream/device/event sync, .item()
bool isSyncCopyCall(std::string_view name);            // synchronous copies: cudaMemcpy, cuMemcpyHtoD, hipMemcpy
bool isCopyCall(std::string_view name);                // any runtime/driver copy call
bool isLaunchCall(std::string_view name);              // calls that enqueue GPU work
// torch.compile at work: "(dynamo_timed)" phases, compile_fx, autotuning
bool isCompilation(std::string_view name);
// "Torch-Compiled Region: 3/1": compiled frame 3, its compile 1 (a recompilation)
bool isCompiledRegion(std::string_view name);
// cudaStreamBeginCapture, hipStreamBeginCapture, cuStreamBeginCapture
bool isCaptureBegin(std::string_view name);
bool isCaptureEnd(std::string_view name); // ...EndCapture
// Kernels (family, precision, Tensor Cores) are classified by the kernel catalogue
// (kernel_catalogue.h, analysis/data/kernel_catalogue.txt), not here.

} // namespace stallscope::analysis::names
