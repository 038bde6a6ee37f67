#pragma once
// Small tests on the first bytes of a file's content (after inflating, for gzip input) that
// the format table (file_formats.cpp) uses to tell formats apart. Each looks at the bytes
// it is given only, never further, and treats bytes cut short as "maybe": the text before
// the cut decides.
#include <string>
#include <string_view>

namespace stallscope::importers {

/// Index of the first byte after a UTF-8 byte order mark and JSON blanks.
size_t skipBomAndBlanks(std::string_view b);

/// '{' or '[' after blanks and a byte order mark, or blanks only (the JSON reader then says
/// what is wrong).
bool looksJson(std::string_view b);

/// A top-level JSON array whose first element is itself an array of numbers and strings (a
/// row, not an event object): torch.profiler's export_memory_timeline_raw rows
/// ([t_ns, action, bytes, category]) and export_memory_timeline's [times, sizes].
bool looksArrayOfRows(std::string_view b);

/// The first key of a top-level JSON object (unescaped only when it has no escapes), or
/// empty when the bytes do not start with an object and a complete key.
std::string firstObjectKey(std::string_view b);

/// An HTML document: "<!DOCTYPE html" or "<html" (any case) first.
bool looksHtml(std::string_view b);

} // namespace stallscope::importers
