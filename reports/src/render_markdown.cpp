// Markdown renderer (GitHub-flavoured): for pull-request comments and CI logs. No HTML:
// severities are words in bold, pictures are described by their alt text, and every trace
// text is escaped or put in a code span.
#include "stallscope/reports/escape.h"
#include "stallscope/reports/report.h"

namespace stallscope::reports {

namespace {

/// `mark` + text + `mark` with the text's outer spaces moved outside the markers
/// (CommonMark does not close "**bold **").
std::string wrap(const std::string& mark, const std::string& t) {
    const size_t a = t.find_first_not_of(' '), b = t.find_last_not_of(' ');
    if (a == std::string::npos) return t;
    return t.substr(0, a) + mark + t.substr(a, b - a + 1) + mark + t.substr(b + 1);
}

std::string span(const Span& s) {
    switch (s.style) {
    case Style::Plain: return escapeMarkdown(s.text);
    case Style::Bold: return wrap("**", escapeMarkdown(s.text));
    case Style::Code: return markdownCodeSpan(s.text);
    case Style::Muted: return wrap("_", escapeMarkdown(s.text));
    case Style::High:
    case Style::Medium:
    case Style::Low:
    case Style::Note:
    case Style::Good:
    case Style::Bad: return wrap("**", escapeMarkdown(s.text));
    }
    return escapeMarkdown(s.text);
}

std::string text(const Text& t) {
    std::string out;
    for (const Span& s : t) out += span(s);
    return out;
}

std::string table(const Table& t) {
    std::string out = "|";
    for (const std::string& h : t.header) out += " " + escapeMarkdown(h) + " |";
    out += "\n|";
    for (size_t c = 0; c < t.header.size(); ++c) out += c < t.rightAlign.size() && t.rightAlign[c] ? " ---: |" : " --- |";
    out += "\n";
    for (const auto& row : t.rows) {
        out += "|";
        for (size_t c = 0; c < t.header.size(); ++c) out += " " + (c < row.size() ? text(row[c]) : std::string()) + " |";
        out += "\n";
    }
    return out + "\n";
}

} // namespace

std::string renderMarkdown(const ReportDocument& doc) {
    std::string out = "# " + escapeMarkdown(doc.title) + "\n\n";
    if (!doc.subtitle.empty()) out += "_" + escapeMarkdown(doc.subtitle) + "_\n\n";
    for (const Block& b : doc.blocks) {
        switch (b.kind) {
        case Block::Kind::Heading: out += std::string(size_t(std::clamp(b.level, 1, 6)), '#') + " " + text(b.text) + "\n\n"; break;
        case Block::Kind::Paragraph: out += text(b.text) + "\n\n"; break;
        case Block::Kind::Table: out += table(b.table); break;
        case Block::Kind::Code: out += markdownCodeBlock(b.code, "python") + "\n"; break;
        case Block::Kind::Picture: out += "> " + escapeMarkdown(b.picture.alt) + " (picture in the HTML report)\n\n"; break;
        case Block::Kind::Bullets:
            for (const Text& item : b.items) out += "- " + text(item) + "\n";
            out += "\n";
            break;
        case Block::Kind::Rule: out += "---\n\n"; break;
        }
    }
    return out;
}

} // namespace stallscope::reports
