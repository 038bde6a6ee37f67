// HTML renderers: the self-contained report page, and the rich-text subset Qt lays out
// for the PDF.
#include "stallscope/reports/escape.h"
#include "stallscope/reports/palette.h"
#include "stallscope/reports/report.h"

namespace stallscope::reports {

namespace {

constexpr const char* kCss = R"CSS(
:root { color-scheme: light; }
body { font: 15px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Roboto, Helvetica, Arial, sans-serif;
       color: #1f2328; background: #fff; margin: 0; }
main { max-width: 980px; margin: 0 auto; padding: 24px 16px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.3em; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8dee4; }
h3 { font-size: 1.08em; margin: 24px 0 6px; }
.subtitle { color: #656d76; font-size: 0.9em; margin: 0 0 16px; word-break: break-all; }
p { margin: 6px 0; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.88em; }
code { background: #f3f4f6; padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
pre { background: #f6f8fa; border: 1px solid #d8dee4; border-radius: 6px; padding: 10px 12px;
      overflow-x: auto; white-space: pre; }
.scroll { overflow-x: auto; margin: 8px 0; }
table { border-collapse: collapse; font-size: 0.9em; min-width: 50%; }
th, td { border-bottom: 1px solid #e5e7eb; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.r, th.r { text-align: right; white-space: nowrap; }
td code { white-space: nowrap; overflow-wrap: normal; }
td:last-child { min-width: 12em; }
.muted { color: #656d76; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; color: #fff; font-size: 0.8em;
         font-weight: 700; letter-spacing: .03em; }
.good { color: #1a7f37; font-weight: 600; }
.bad { color: #cf222e; font-weight: 600; }
figure { margin: 10px 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e5e7eb; border-radius: 4px; }
hr { border: 0; border-top: 3px double #d8dee4; margin: 36px 0 0; }
footer { color: #8c959f; font-size: 0.8em; margin-top: 40px; }
@media (max-width: 600px) { body { font-size: 14px; } main { padding: 12px 10px 32px; } th, td { padding: 3px 6px; } }
@media print { main { max-width: none; padding: 0; } h2 { break-after: avoid; } figure, pre, tr { break-inside: avoid; }
               .scroll { overflow: visible; } }
)CSS";

std::string span(const Span& s) {
    const std::string t = escapeHtml(s.text);
    auto badge = [&](analysis::FindingSeverity sev) {
        return "<span class=\"badge\" style=\"color:#ffffff; background-color:" + hexColor(severityRgb(sev)) + "\">&nbsp;" +
               t + "&nbsp;</span>";
    };
    switch (s.style) {
    case Style::Plain: return t;
    case Style::Bold: return "<strong>" + t + "</strong>";
    case Style::Code: return "<code>" + t + "</code>";
    case Style::Muted: return "<span class=\"muted\">" + t + "</span>";
    case Style::High: return badge(analysis::FindingSeverity::High);
    case Style::Medium: return badge(analysis::FindingSeverity::Medium);
    case Style::Low: return badge(analysis::FindingSeverity::Low);
    case Style::Note: return badge(analysis::FindingSeverity::Note);
    case Style::Good: return "<span class=\"good\">" + t + "</span>";
    case Style::Bad: return "<span class=\"bad\">" + t + "</span>";
    }
    return t;
}

std::string text(const Text& t) {
    std::string out;
    for (const Span& s : t) out += span(s);
    return out;
}

std::string table(const Table& t) {
    auto right = [&](size_t c) { return c < t.rightAlign.size() && t.rightAlign[c]; };
    std::string out = "<div class=\"scroll\"><table><thead><tr>";
    for (size_t c = 0; c < t.header.size(); ++c)
        out += std::string(right(c) ? "<th class=\"r\">" : "<th>") + escapeHtml(t.header[c]) + "</th>";
    out += "</tr></thead><tbody>";
    for (const auto& row : t.rows) {
        out += "<tr>";
        for (size_t c = 0; c < row.size(); ++c) out += std::string(right(c) ? "<td class=\"r\">" : "<td>") + text(row[c]) + "</td>";
        out += "</tr>";
    }
    return out + "</tbody></table></div>\n";
}

} // namespace

std::string renderHtml(const ReportDocument& doc) {
    std::string out;
    out.reserve(64 * 1024);
    out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
           // Nothing may be fetched or run, whatever the trace's text contains.
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:\">\n"
           "<meta name=\"generator\" content=\"Stallscope\">\n<title>" +
           escapeHtml(doc.title) + "</title>\n<style>" + kCss + "</style></head>\n<body><main>\n";
    out += "<h1>" + escapeHtml(doc.title) + "</h1>\n";
    if (!doc.subtitle.empty()) out += "<p class=\"subtitle\">" + escapeHtml(doc.subtitle) + "</p>\n";
    for (const Block& b : doc.blocks) {
        switch (b.kind) {
        case Block::Kind::Heading: {
            const std::string tag = "h" + std::to_string(std::clamp(b.level, 1, 4));
            out += "<" + tag + (b.anchor.empty() ? "" : " id=\"" + escapeHtml(b.anchor) + "\"") + ">" + text(b.text) +
                   "</" + tag + ">\n";
            break;
        }
        case Block::Kind::Paragraph: out += "<p>" + text(b.text) + "</p>\n"; break;
        case Block::Kind::Table: out += table(b.table); break;
        case Block::Kind::Code: out += "<pre><code>" + escapeHtml(b.code) + "</code></pre>\n"; break;
        case Block::Kind::Picture:
            // The SVG is ours: built with every trace text escaped (svg.h).
            out += "<figure role=\"img\" aria-label=\"" + escapeHtml(b.picture.alt) + "\">" + b.picture.svg + "</figure>\n";
            break;
        case Block::Kind::Bullets:
            out += "<ul>";
            for (const Text& item : b.items) out += "<li>" + text(item) + "</li>";
            out += "</ul>\n";
            break;
        case Block::Kind::Rule: out += "<hr>\n"; break;
        }
    }
    out +=
        "<footer>Made with Stallscope. Savings come from the what-if replay: the window replayed "
        "with each finding's fix applied after those above it (docs/analysis.md, \"What-if "
        "replay\"); a finding without a fix to replay shows the idle time charged to it."
        "</footer>\n</main></body></html>\n";
    return out;
}

std::string renderRichText(const ReportDocument& doc, std::vector<const Picture*>& pictures, int maxPictureWidth) {
    // Qt's rich text: a subset of HTML 4 and CSS 2.1; no inline SVG, no classes on spans
    // beyond simple properties, tables with cellpadding.
    std::string out = "<html><head><style>"
                      "body { font-family: 'DejaVu Sans'; font-size: 9.5pt; color: #1f2328; }"
                      "h1 { font-size: 17pt; } h2 { font-size: 13pt; margin-top: 16px; } h3 { font-size: 11pt; }"
                      "code, pre { font-family: 'DejaVu Sans Mono'; font-size: 8.5pt; }"
                      "pre { background-color: #f6f8fa; }"
                      "th { background-color: #f0f2f5; text-align: left; }"
                      "</style></head><body>";
    out += "<h1>" + escapeHtml(doc.title) + "</h1>";
    if (!doc.subtitle.empty()) out += "<p style=\"color:#656d76\">" + escapeHtml(doc.subtitle) + "</p>";
    for (const Block& b : doc.blocks) {
        switch (b.kind) {
        case Block::Kind::Heading: {
            const std::string tag = "h" + std::to_string(std::clamp(b.level, 1, 4));
            out += "<" + tag + ">" + text(b.text) + "</" + tag + ">";
            break;
        }
        case Block::Kind::Paragraph: out += "<p>" + text(b.text) + "</p>"; break;
        case Block::Kind::Table: {
            const Table& t = b.table;
            out += "<table cellspacing=\"0\" cellpadding=\"3\" border=\"0\" width=\"100%\"><tr>";
            for (size_t c = 0; c < t.header.size(); ++c)
                out += std::string(c < t.rightAlign.size() && t.rightAlign[c] ? "<th align=\"right\">" : "<th>") +
                       escapeHtml(t.header[c]) + "</th>";
            out += "</tr>";
            for (size_t r = 0; r < t.rows.size(); ++r) {
                out += r % 2 ? "<tr style=\"background-color:#f8f9fb\">" : "<tr>";
                for (size_t c = 0; c < t.rows[r].size(); ++c)
                    out += std::string(c < t.rightAlign.size() && t.rightAlign[c] ? "<td align=\"right\">" : "<td>") +
                           text(t.rows[r][c]) + "</td>";
                out += "</tr>";
            }
            out += "</table>";
            break;
        }
        case Block::Kind::Code: out += "<pre>" + escapeHtml(b.code) + "</pre>"; break;
        case Block::Kind::Picture: {
            const double fit = b.picture.width > maxPictureWidth ? double(maxPictureWidth) / b.picture.width : 1.0;
            out += "<p><img src=\"picture:" + std::to_string(pictures.size()) + "\" width=\"" +
                   std::to_string(int(b.picture.width * fit)) + "\" height=\"" +
                   std::to_string(int(b.picture.height * fit)) + "\"></p>";
            pictures.push_back(&b.picture);
            break;
        }
        case Block::Kind::Bullets:
            out += "<ul>";
            for (const Text& item : b.items) out += "<li>" + text(item) + "</li>";
            out += "</ul>";
            break;
        case Block::Kind::Rule: out += "<hr>"; break;
        }
    }
    return out + "</body></html>";
}

} // namespace stallscope::reports
