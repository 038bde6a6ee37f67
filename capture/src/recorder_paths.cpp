// Where the CUPTI injection library is, and what `stallscope-cli --version` says about it.
#include "stallscope/capture/recorder.h"

#include <cstdlib>
#include <initializer_list>

namespace stallscope::capture {

namespace {

constexpr const char* kInjectionFile = "libstallscope_cupti_injection.so";

constexpr const char* kDemoFile = "stallscope-demo";

/// The first of `relative` (to the running executable's folder) that is a file.
std::filesystem::path besideExecutable(std::initializer_list<std::filesystem::path> relative) {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    const std::filesystem::path dir = exe.parent_path();
    for (const std::filesystem::path& r : relative) {
        const std::filesystem::path candidate = dir / r;
        if (std::filesystem::is_regular_file(candidate, ec)) return std::filesystem::weakly_canonical(candidate, ec);
    }
    return {};
}

} // namespace

std::filesystem::path injectionLibraryPath() {
    if (const char* e = std::getenv("STALLSCOPE_CUPTI_INJECTION"); e && *e) return e;
    // Installed next to the executable or in its lib folder; in a build tree, the CLI and
    // the tests are one level below the build root and the library is in capture/cupti.
    const std::filesystem::path file = kInjectionFile;
    return besideExecutable({file, "../lib/stallscope" / file, "../lib" / file, "../capture/cupti" / file});
}

std::filesystem::path demoExecutablePath() {
    if (const char* e = std::getenv("STALLSCOPE_DEMO"); e && *e) return e;
    const std::filesystem::path file = kDemoFile;
    return besideExecutable({file, "../lib/stallscope" / file, "../app" / file});
}

std::string captureFeatureLine() {
#ifdef STALLSCOPE_HAVE_CUPTI
    const std::filesystem::path p = injectionLibraryPath();
    if (p.empty()) return "live GPU capture: built (the injection library was not found: set STALLSCOPE_CUPTI_INJECTION)";
    return "live GPU capture: built (" + p.string() + ")";
#else
    return "live GPU capture: not built (no CUDA toolkit at build time)";
#endif
}

} // namespace stallscope::capture
