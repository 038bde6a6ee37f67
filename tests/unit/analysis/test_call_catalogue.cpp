// The call catalogue (analysis/data/call_catalogue.txt): real call names of the CUDA runtime
// and driver APIs, HIP, NVRTC and PyTorch, and the family the catalogue must give each; the
// parser's errors.
#include "stallscope/analysis/call_catalogue.h"

#include <QTest>

using namespace stallscope::analysis;

namespace {
using F = CallFamily;
struct Case {
    const char* name;
    F family;
};
// Names as they appear in the corpus (../shared/traces) and in the APIs' references.
const Case kCases[] = {
    {"cudaLaunchKernel", F::Launch},
    {"cudaLaunchKernelExC", F::Launch},
    {"cuLaunchKernel", F::Launch},
    {"cudaGraphLaunch", F::Launch},
    {"hipGraphLaunch", F::Launch},
    {"hipLaunchKernel", F::Launch},
    {"hipExtModuleLaunchKernel", F::Launch},
    {"hipModuleLaunchKernel", F::Launch},
    {"cudaMemsetAsync", F::Launch},
    {"cudaMemcpyAsync", F::Copy},
    {"hipMemcpyAsync", F::Copy},
    {"cudaMemcpy", F::CopySync},
    {"hipMemcpyWithStream", F::CopySync},
    {"cuMemcpyHtoD_v2", F::CopySync},
    {"cudaStreamSynchronize", F::Sync},
    {"cudaDeviceSynchronize", F::Sync},
    {"hipDeviceSynchronize", F::Sync},
    {"aten::item", F::Sync},
    {"aten::_local_scalar_dense", F::Sync},
    {"cudaStreamWaitEvent", F::Stream},
    {"hipStreamWaitEvent", F::Stream},
    {"cudaEventRecord", F::Stream},
    {"cudaMalloc", F::Alloc},
    {"cudaFree", F::Alloc},
    {"cudaHostAlloc", F::Alloc},
    {"cudaMallocAsync", F::Alloc},
    {"hipFree", F::Alloc},
    {"hipMalloc", F::Alloc},
    {"cuMemAlloc_v2", F::Alloc},
    {"cuMemUnmap", F::Alloc},
    {"cudaStreamCreateWithFlags", F::Resource},
    {"cudaStreamCreateWithPriority", F::Resource},
    {"cudaEventCreateWithFlags", F::Resource},
    {"hipEventDestroy", F::Resource},
    {"hipGraphDestroy", F::Resource},
    {"cuModuleLoadData", F::Module},
    {"cuLibraryLoadData", F::Module},
    {"cudaGetFuncBySymbol", F::Module},
    {"nvrtcCompileProgram", F::Jit},
    {"cudnnFindConvolutionForwardAlgorithmEx", F::Jit},
    {"prim::FusionGroup", F::Jit},
    {"fallback_function", F::Jit},
    {"OutputGraph.call_user_compiler (dynamo_timed)", F::Compile},
    {"compile_fx_inner (dynamo_timed)", F::Compile},
    {"torch/_dynamo/convert_frame.py(1000): _compile", F::Compile},
    {"hipStreamBeginCapture", F::Capture},
    {"hipGraphInstantiateWithFlags", F::Capture},
    {"cudaStreamGetCaptureInfo", F::Query},
    {"cudaStreamIsCapturing", F::Query},
    {"cudaDeviceGetStreamPriorityRange", F::Query},
    {"cudaGetDeviceProperties", F::Query},
    {"cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", F::Query},
    {"hipGetDevicePropertiesR0600", F::Query},
    {"cudaEventQuery", F::Query},
    // Not calls of any family: operators, frames, and what only looks like one.
    {"aten::mm", F::None},
    {"flashinfer/autotuner.py(400): choose_one", F::None},     // a library's cache lookup
    {"torch/_inductor/compile_fx.py(2735): wrapper", F::None}, // a compiled graph's runtime
    {"torch/_functorch/aot_autograd.py(1126): forward", F::None},
};
} // namespace

class TestCallCatalogue : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realNames() {
        for (const Case& c : kCases) {
            const F got = classifyCall(c.name);
            QVERIFY2(got == c.family,
                     qPrintable(QString("%1: %2, expected %3")
                                    .arg(c.name)
                                    .arg(QString::fromUtf8(callFamilyName(got).data()))
                                    .arg(QString::fromUtf8(callFamilyName(c.family).data()))));
        }
    }

    void builtInHasEveryFamily() {
        const auto& cat = CallCatalogue::builtIn();
        for (size_t f = 1; f < size_t(F::Count); ++f) {
            bool any = false;
            for (const auto& r : cat.rules()) any |= r.family == F(f);
            QVERIFY2(any, callFamilyName(F(f)).data());
        }
    }

    void parseErrorsNameTheLine() {
        std::string error;
        QVERIFY(!CallCatalogue::parse("# ok\nlaunch prefix cudaLaunch\nlunch prefix x\n", error));
        QVERIFY2(error.find("line 3") != std::string::npos &&
                     error.find("lunch") != std::string::npos,
                 error.c_str());
        QVERIFY(!CallCatalogue::parse("alloc like cudaMalloc\n", error));
        QVERIFY2(error.find("match") != std::string::npos, error.c_str());
        QVERIFY(!CallCatalogue::parse("alloc prefix\n", error));
        // First match wins; exact is exact; contains finds inside.
        const auto cat = CallCatalogue::parse(
            "sync exact cudaMemcpy\ncopy prefix cudaMemcpy\njit contains rtc\n", error);
        QVERIFY2(cat, error.c_str());
        QCOMPARE(int(cat->classify("cudaMemcpy")), int(F::Sync));
        QCOMPARE(int(cat->classify("cudaMemcpyAsync")), int(F::Copy));
        QCOMPARE(int(cat->classify("hiprtcCompile")), int(F::Jit));
        QCOMPARE(int(cat->classify("cudaFree")), int(F::None));
    }
};

QTEST_GUILESS_MAIN(TestCallCatalogue)
#include "test_call_catalogue.moc"
