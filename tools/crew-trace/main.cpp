// crew-trace: look at a crew trace (pool_options::trace / CREW_TRACE, docs/OBSERVABILITY.md, "Trace").
//
//   crew-trace view trace.json > trace.html   a self-contained HTML page (inline script and style,
//                                             no network): one lane per worker, tasks as bars,
//                                             steals as arrows, parked time shaded, a summary table
//   crew-trace check trace.json               validate the file; print workers, events, steals
//
// Exit status: 0 on success, 1 when the file is not a readable trace, 2 on a usage error.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "json.hpp"
#include "viewer_html.hpp"

namespace {

int usage() {
    std::fputs("usage: crew-trace view <trace.json> > trace.html\n"
               "       crew-trace check <trace.json>\n",
               stderr);
    return 2;
}

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct stats {
    std::size_t workers = 0;
    std::size_t events = 0;
    std::size_t steals = 0;
    std::size_t tasks = 0;
};

// A trace is a JSON object with a traceEvents array of objects that each have a "ph" string.
stats validate(const crew_trace::json::value& root) {
    using kind = crew_trace::json::value::kind;
    if (root.type != kind::object || !root.has("traceEvents") || root["traceEvents"].type != kind::array)
        throw std::runtime_error("not a Chrome trace: no traceEvents array");
    stats s;
    for (const auto& e : root["traceEvents"].items) {
        if (e.type != kind::object || !e.has("ph") || e["ph"].type != kind::string)
            throw std::runtime_error("not a Chrome trace: an event without a \"ph\" string");
        ++s.events;
        const std::string& ph = e["ph"].s;
        if (ph == "M" && e.has("name") && e["name"].s == "thread_name") ++s.workers;
        if (ph == "f") ++s.steals;
        if ((ph == "X" || ph == "B") && e.has("cat") && e["cat"].s == "task") ++s.tasks;
    }
    return s;
}

// The JSON inside a <script> element: "</" may only occur inside JSON strings, where "<\/" means
// the same, so the element cannot be closed early.
std::string script_safe(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 64);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
            out += "<\\/";
            ++i;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::string html_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) return usage();
    const std::string command = argv[1], path = argv[2];
    if (command != "view" && command != "check") return usage();
    try {
        const std::string text = read_all(path);
        const stats s = validate(crew_trace::json::parse(text));
        if (command == "check") {
            std::printf("%s: %zu workers, %zu events, %zu tasks, %zu steals\n", path.c_str(), s.workers, s.events,
                        s.tasks, s.steals);
            return 0;
        }
        std::string page(crew_trace::viewer_html);
        const std::string marker = "@TRACE_JSON@", title = "@TITLE@";
        for (std::size_t at = page.find(title); at != std::string::npos; at = page.find(title, at + 1))
            page.replace(at, title.size(), html_escape(path));
        page.replace(page.find(marker), marker.size(), script_safe(text));
        std::fwrite(page.data(), 1, page.size(), stdout);
        return std::fflush(stdout) == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crew-trace: %s: %s\n", path.c_str(), e.what());
        return 1;
    }
}
