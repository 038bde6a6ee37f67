#include "report_common.h"

#include "stallscope/base/text_format.h"
#include "stallscope/base/utf8.h"
#include "stallscope/reports/escape.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

namespace stallscope::reports {

using base::closeBidi;
using base::formatCount;
using base::sanitizeUtf8;
using base::truncateUtf8;

void ReportDocument::heading(int level, std::string text, std::string anchorId) {
    Block b{Block::Kind::Heading};
    b.level = level;
    b.text = plain(std::move(text));
    b.anchor = std::move(anchorId);
    blocks.push_back(std::move(b));
}

void ReportDocument::paragraph(Text text) {
    Block b{Block::Kind::Paragraph};
    b.text = std::move(text);
    blocks.push_back(std::move(b));
}

void ReportDocument::table(Table t) {
    Block b{Block::Kind::Table};
    b.table = std::move(t);
    blocks.push_back(std::move(b));
}

void ReportDocument::code(std::string c) {
    Block b{Block::Kind::Code};
    b.code = std::move(c);
    blocks.push_back(std::move(b));
}

void ReportDocument::picture(Picture p) {
    if (p.svg.empty()) return;
    Block b{Block::Kind::Picture};
    b.picture = std::move(p);
    blocks.push_back(std::move(b));
}

void ReportDocument::bullets(std::vector<Text> items) {
    Block b{Block::Kind::Bullets};
    b.items = std::move(items);
    blocks.push_back(std::move(b));
}

namespace detail {

std::string pct(double share) {
    return base::formatPercent(share, 1);
}

std::string svgOpen(int width, int height, int fontSize) {
    const std::string w = std::to_string(width), h = std::to_string(height);
    return "<svg xmlns='http://www.w3.org/2000/svg' width='" + w + "' height='" + h +
           "' viewBox='0 0 " + w + " " + h +
           "' font-family='DejaVu Sans, Arial, sans-serif' font-size='" + std::to_string(fontSize) +
           "'><rect width='100%' height='100%' fill='#ffffff'/>";
}

std::string svgNum(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string anchor(std::string_view text) {
    std::string out;
    for (char c : text) {
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (alnum) out += c;
        else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
        else if (!out.empty() && out.back() != '-') out += '-';
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out;
}

std::string shortName(std::string_view name, size_t max) { return truncateUtf8(sanitizeUtf8(name), max); }

std::string fileName(const std::string& path) {
    const std::string f = std::filesystem::path(path).filename().string();
    return closeBidi(f.empty() ? path : f);
}

std::string subtitle(const ReportInput& in, const ReportOptions& o) {
    std::string when = o.generatedAt;
    if (when.empty()) {
        const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
        std::tm tm{};
        gmtime_r(&now, &tm);
        char buf[64];
        std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
        when = buf;
    }
    std::string s = closeBidi(in.path);
    if (in.trace) {
        s += " · " + in.trace->metadata().formatName + " · " + formatCount(in.trace->importStats().entries) + " events";
    }
    s += " · generated " + when + " by Stallscope" + (o.version.empty() ? "" : " " + o.version);
    return s;
}

Text prose(std::string_view text, Style style) {
    Text out;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t open = text.find('`', pos);
        const size_t close = open == std::string_view::npos ? open : text.find('`', open + 1);
        if (close == std::string_view::npos) {
            out.push_back({std::string(text.substr(pos)), style});
            break;
        }
        if (open > pos) out.push_back({std::string(text.substr(pos, open - pos)), style});
        out.push_back({std::string(text.substr(open + 1, close - open - 1)), Style::Code});
        pos = close + 1;
    }
    return out;
}

} // namespace detail
} // namespace stallscope::reports
