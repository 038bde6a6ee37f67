#pragma once
// A report as a small format-neutral document: headings, paragraphs of styled spans,
// tables, code blocks, pictures (SVG) and bullet lists. The builders (report.h) fill it from
// an analysis; the renderers turn it into HTML, Markdown or the rich text the PDF is laid
// out from, so every format says the same thing. All text is raw (unescaped); renderers
// escape it for their format.
#include <string>
#include <vector>

namespace stallscope::reports {

enum class Style : uint8_t { Plain, Bold, Code, Muted, High, Medium, Low, Note, Good, Bad };

struct Span {
    std::string text;
    Style style = Style::Plain;
};
using Text = std::vector<Span>;

inline Text plain(std::string s) { return {Span{std::move(s), Style::Plain}}; }

struct Table {
    std::vector<std::string> header;
    std::vector<bool> rightAlign;          // per column
    std::vector<std::vector<Text>> rows;
};

struct Picture {
    std::string svg;                       // a complete <svg> element
    std::string alt;                       // what it shows, for Markdown and screen readers
    int width = 0, height = 0;             // in CSS pixels
};

struct Block {
    enum class Kind { Heading, Paragraph, Table, Code, Picture, Bullets, Rule } kind = Kind::Paragraph;
    int level = 2;                         // Heading: 1..3
    std::string anchor;                    // Heading: id for links
    Text text;                             // Heading, Paragraph
    Table table;
    std::string code;                      // Code
    Picture picture;
    std::vector<Text> items;               // Bullets
};

struct ReportDocument {
    std::string title;
    std::string subtitle;                  // source, date, version
    std::vector<Block> blocks;

    void heading(int level, std::string text, std::string anchor = {});
    void paragraph(Text text);
    void table(Table t);
    void code(std::string code);
    void picture(Picture p);
    void bullets(std::vector<Text> items);
};

} // namespace stallscope::reports
