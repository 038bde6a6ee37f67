#pragma once
// Reading the few argument values analysis needs from their JSON text (model::ArgValue::json,
// as written in the trace): shapes, integers and plain strings. Anything else reads as absent.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::analysis::detail {

/// "[[32, 3, 224, 224], [64, 3, 7, 7], [], []]" -> the shapes, in order.
std::vector<std::vector<int64_t>> parseDims(std::string_view json);

/// A non-negative integer ("2049000", "2049000.0"); nullopt for anything else.
std::optional<int64_t> argInteger(std::string_view json);

/// A JSON string without escapes ("\"Float\"" -> "Float"); nullopt for anything else.
std::optional<std::string> argString(std::string_view json);

/// "[\"float\", \"\", \"[2, 2]\"]" -> the strings, in order (an item that is not a string
/// reads as ""); escapes keep the escaped character.
std::vector<std::string> parseStrings(std::string_view json);

/// JSON text without its whitespace outside strings, one space after each comma:
/// "[[32,\n 3]]" -> "[[32, 3]]" (the same value written two ways groups as one).
std::string compactJson(std::string_view json);

} // namespace stallscope::analysis::detail
