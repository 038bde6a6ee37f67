#pragma once
// C++ symbol names as people read them: `_ZN7ck_tile6kentry...` -> `void
// ck_tile::kentry<...>(...)`. GPU kernels compiled from templates (CUTLASS, Composable Kernel,
// PyTorch's own) reach the trace mangled; the tables and the event details show them demangled (the
// C++ runtime's demangler, abi::__cxa_demangle), the JSON and the findings keep the name as
// written.
#include <string>
#include <string_view>

namespace stallscope::base {

/// The demangled name when `name` is an Itanium C++ ABI symbol (`_Z...`) the runtime can
/// demangle; otherwise `name` unchanged.
std::string demangle(std::string_view name);

/// Whether `name` looks mangled (starts with `_Z`).
bool looksMangled(std::string_view name);

} // namespace stallscope::base
