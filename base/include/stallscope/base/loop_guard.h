#pragma once
// Loops that must end: every paint, layout and search loop whose cursor is computed (a
// seek, a gallop, a pixel boundary) rather than incremented checks that the cursor moved
// forward. A debug build stops at the first loop that did not advance, naming the place;
// a release build leaves the loop (the caller breaks out) and counts the event, so a
// view never spins forever and tests can assert that the count stayed zero.
#include <atomic>
#include <cstdint>

namespace stallscope::base {

/// Times a guarded loop failed to advance since the program started (release builds).
uint64_t loopStallCount();
/// Records a loop that did not advance; aborts in debug builds. Returns false.
bool loopStalled(const char* file, int line);

} // namespace stallscope::base

/// True when `next` is past `prev`; otherwise reports the stall (see loop_guard.h) and is
/// false, so `if (!STALLSCOPE_ADVANCED(i, next)) break;` keeps the loop finite.
#define STALLSCOPE_ADVANCED(prev, next) \
    (((next) > (prev)) ? true : ::stallscope::base::loopStalled(__FILE__, __LINE__))
