#pragma once
// The args of one Chrome-trace event, parsed from its JSON text: what the importers'
// event sources do on demand, for event sources kept elsewhere (the live-capture event
// log).
#include "stallscope/model/event_source.h"

#include <string>
#include <string_view>
#include <vector>

namespace stallscope::importers {

/// Parses the "args" object of one event's JSON text into key -> JSON text pairs, in file
/// order. Returns false and sets `error` when the text is not a JSON object.
bool parseChromeEventArgs(std::string_view eventJson, std::vector<model::ArgValue>& out, std::string& error);

} // namespace stallscope::importers
