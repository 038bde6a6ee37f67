#pragma once
// STALLSCOPE_TEST_ASAN is 1 in a build under AddressSanitizer, whichever the compiler: gcc
// defines __SANITIZE_ADDRESS__, clang-14 (the asan preset) answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define STALLSCOPE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STALLSCOPE_TEST_ASAN 1
#endif
#endif
#ifndef STALLSCOPE_TEST_ASAN
#define STALLSCOPE_TEST_ASAN 0
#endif
