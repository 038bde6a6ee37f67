#pragma once
// Escaping for untrusted text (event names and args from other people's traces) in every
// output format. Everything passes base::sanitizeUtf8 first: invalid UTF-8 becomes U+FFFD and
// control characters other than tab and line breaks are dropped (XML forbids them even as
// character references), so one hostile byte cannot break a report.
#include <string>
#include <string_view>

namespace stallscope::reports {

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

} // namespace stallscope::reports
