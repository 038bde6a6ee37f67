#pragma once
// Detects an input's format from its content, never from its name.
#include <filesystem>
#include <string>
#include <string_view>

namespace stallscope::importers {

enum class InputFormat {
    Missing,          // the path does not exist
    Directory,        // a folder: TensorBoard log folder
    Empty,            // zero bytes
    Gzip,             // gzip stream (content sniffed after inflating)
    ChromeJson,       // '{' or '[' (after whitespace / BOM)
    XPlaneProtobuf,   // XSpace protobuf (TensorBoard profile plugin)
    Unknown,
};

InputFormat sniffBytes(std::string_view firstBytes);
InputFormat sniffPath(const std::filesystem::path& path, std::string* error = nullptr);
const char* inputFormatName(InputFormat f);

} // namespace stallscope::importers
