#pragma once
// Escaping for untrusted text (event names and args from other people's traces) in every
// output format. Everything passes sanitizeUtf8 first: invalid UTF-8 becomes U+FFFD and
// control characters other than tab and line breaks are dropped (XML forbids them even as
// character references), so one hostile byte cannot break a report.
#include <string>
#include <string_view>

namespace stallscope::reports {

/// Valid UTF-8 without C0 controls (except \t \n \r) and DEL.
std::string sanitizeUtf8(std::string_view s);

/// Only what is not UTF-8 replaced (U+FFFD per bad byte); everything else kept, controls
/// too (for formats that escape them, such as JSON).
std::string replaceInvalidUtf8(std::string_view s);

/// sanitizeUtf8, then every directional embedding, override or isolate that `s` opens and
/// leaves open (U+202A..U+202E, U+2066..U+2068) closed at its end with U+202C / U+2069, so
/// a U+202E in a name cannot reverse the report's text that follows it. Balanced text is
/// unchanged. Use it wherever a name is joined with other text before escaping.
std::string closeBidi(std::string_view s);

/// HTML/XML text and attribute values: closeBidi, then & < > " ' escaped.
std::string escapeHtml(std::string_view s);

/// Markdown text outside code (closeBidi first): every ASCII punctuation character that
/// Markdown or GitHub's HTML passthrough could interpret is backslash-escaped; line breaks
/// become spaces when `singleLine` (table cells, headings).
std::string escapeMarkdown(std::string_view s, bool singleLine = true);

/// An inline code span (closeBidi first) whose fence is longer than any backtick run inside
/// (CommonMark); '|' is escaped for table cells.
std::string markdownCodeSpan(std::string_view s);

/// A fenced code block with a fence longer than any backtick run inside.
std::string markdownCodeBlock(std::string_view code, std::string_view language = {});

/// At most `maxChars` code points, with "…" when cut.
std::string truncateUtf8(std::string_view s, size_t maxChars);

} // namespace stallscope::reports
