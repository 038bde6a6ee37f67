#pragma once
// Shared helpers for the QtTest suites.
#include "stallscope/base/result.h"

#include <QTest>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace stallscope::test {

inline std::filesystem::path sharedTraces() {
    const char* e = std::getenv("STALLSCOPE_SHARED_TRACES");
    return e && *e ? std::filesystem::path(e) : std::filesystem::path("../shared/traces");
}

inline bool haveSharedTraces() { return std::filesystem::is_directory(sharedTraces()); }

inline void writeFile(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string readFile(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

/// A Status as a bool, its message in `error` on failure (the tests check the message).
inline bool okOr(const base::Status& status, std::string& error) {
    if (!status) error = status.error().message;
    return status.ok();
}

/// A Result's value, or T{} with its message in `error`.
template <class T> T valueOr(base::Result<T> result, std::string& error) {
    if (!result) {
        error = result.error().message;
        return T{};
    }
    return std::move(result.value());
}

} // namespace stallscope::test

#define STALLSCOPE_REQUIRE_SHARED_TRACES()                                                        \
    do {                                                                                         \
        if (!stallscope::test::haveSharedTraces())                                               \
            QSKIP("../shared/traces is absent (set STALLSCOPE_SHARED_TRACES): real-trace test skipped"); \
    } while (0)
