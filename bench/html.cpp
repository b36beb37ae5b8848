// The self-contained HTML report: inline SVG charts, inline CSS, no network.
//   - per problem: a bar chart of median time (min-max whiskers) for every implementation and
//     thread count (svg.chart-time), a speed-up-against-threads chart (svg.chart-speedup) and, where
//     the problem counts tasks, the per-task overhead at each thread count (svg.chart-overhead);
//   - the targets with met / missed, the machine, the exact command, every cell in a table.
// A few lines of inline script count the charts the browser actually laid out and record the
// count on <body data-charts-rendered>, which the report-render test reads back.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "harness.hpp"
#include "report_util.hpp"

namespace crew_bench {

namespace {

std::string esc(const std::string& s) {
    std::string out;
    for (char ch : s) {
        switch (ch) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}

std::string color(const std::string& impl) {
    static const std::map<std::string, std::string> colors = {
        {"crew", "#c0392b"},         {"serial", "#555555"},       {"onetbb", "#2e86c1"},
        {"openmp", "#e67e22"},       {"shared-queue", "#7f8c8d"}, {"mutex-deques", "#8e44ad"},
        {"static-split", "#16a085"}, {"bandwidth-probe", "#27ae60"}};
    auto it = colors.find(impl);
    if (it != colors.end()) return it->second;
    if (impl.rfind("crew", 0) == 0) return "#e74c3c";
    if (impl.rfind("floor", 0) == 0) return "#27ae60";
    return "#34495e";
}

std::string n2(double v) { return format_num(v, 2); }

std::vector<const cell*> cells_of(const results& r, const std::string& p) {
    std::vector<const cell*> out;
    for (auto& c : r.cells)
        if (c.problem == p) out.push_back(&c);
    return out;
}

std::string label(const cell& c) { return c.impl + (c.serial ? "" : " \xc2\xb7 " + std::to_string(c.threads) + "t"); }

// Horizontal bars: one row per cell, value(c) >= 0, drawn with optional min/max whiskers.
template <class Value, class Lo, class Hi, class Text>
std::string hbar_chart(const std::string& cls, const std::string& pname, const std::string& caption,
                       const std::vector<const cell*>& cells, Value value, Lo lo, Hi hi, Text text) {
    const int row = 20, left = 170, width = 460, right = 150;
    double vmax = 0;
    for (auto* c : cells) vmax = std::max(vmax, std::max(value(*c), hi(*c)));
    if (vmax <= 0) vmax = 1;
    int h = static_cast<int>(cells.size()) * row + 30;
    std::ostringstream s;
    s << "<figure><svg class=\"chart " << cls << "\" data-problem=\"" << esc(pname) << "\" width=\""
      << left + width + right << "\" height=\"" << h << "\" viewBox=\"0 0 " << left + width + right << " " << h
      << "\" role=\"img\" aria-label=\"" << esc(caption) << "\">";
    int y = 10;
    for (auto* c : cells) {
        double v = value(*c);
        double w = v > 0 ? v / vmax * width : 0;
        s << "<text x=\"" << left - 6 << "\" y=\"" << y + 14 << "\" text-anchor=\"end\">" << esc(label(*c)) << "</text>";
        s << "<rect class=\"bar\" x=\"" << left << "\" y=\"" << y + 3 << "\" width=\"" << n2(std::max(w, 1.0))
          << "\" height=\"" << row - 6 << "\" fill=\"" << color(c->impl) << "\"><title>" << esc(text(*c))
          << "</title></rect>";
        double l = lo(*c), u = hi(*c);
        if (u > l && l > 0) {
            double x1 = left + l / vmax * width, x2 = left + u / vmax * width, ym = y + row / 2.0;
            s << "<line class=\"whisker\" x1=\"" << n2(x1) << "\" x2=\"" << n2(x2) << "\" y1=\"" << ym << "\" y2=\"" << ym
              << "\" stroke=\"#000\"/>";
        }
        s << "<text x=\"" << left + w + 6 << "\" y=\"" << y + 14 << "\">" << esc(text(*c)) << "</text>";
        y += row;
    }
    s << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"5\" y2=\"" << y << "\" stroke=\"#999\"/>";
    s << "</svg><figcaption>" << esc(caption) << "</figcaption></figure>\n";
    return s.str();
}

std::string speedup_chart(const results& r, const problem& p, const std::vector<const cell*>& cells) {
    std::vector<std::size_t> ts = r.cfg.threads;
    double smax = 1e-3;  // the axis fits the data; the ideal line is drawn only when it fits too
    std::map<std::string, std::vector<std::pair<std::size_t, double>>> lines;
    for (auto* c : cells)
        if (!c->serial && c->speedup > 0) lines[c->impl].push_back({c->threads, c->speedup});
    if (lines.empty()) return "";
    for (auto& [k, v] : lines)
        for (auto& [t, s] : v) smax = std::max(smax, s);
    smax *= 1.1;
    const int left = 50, top = 15, w = 380, h = 220, legend = 150;
    auto px = [&](double t) {
        double tmax = static_cast<double>(*std::max_element(ts.begin(), ts.end()));
        return left + (tmax > 1 ? (t - 1) / (tmax - 1) : 0.5) * w;
    };
    auto py = [&](double s) { return top + h - s / smax * h; };
    std::ostringstream o;
    o << "<figure><svg class=\"chart chart-speedup\" data-problem=\"" << esc(p.name) << "\" width=\"" << left + w + legend
      << "\" height=\"" << top + h + 40 << "\" role=\"img\" aria-label=\"speed-up against threads\">";
    o << "<line x1=\"" << left << "\" y1=\"" << top + h << "\" x2=\"" << left + w << "\" y2=\"" << top + h
      << "\" stroke=\"#999\"/><line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + h
      << "\" stroke=\"#999\"/>";
    for (std::size_t t : ts)
        o << "<text x=\"" << n2(px(static_cast<double>(t))) << "\" y=\"" << top + h + 16 << "\" text-anchor=\"middle\">" << t
          << "</text>";
    o << "<text x=\"" << left + w / 2 << "\" y=\"" << top + h + 34 << "\" text-anchor=\"middle\">threads</text>";
    for (int k = 0; k <= 4; ++k)
        o << "<text x=\"" << left - 6 << "\" y=\"" << n2(py(smax * k / 4) + 4) << "\" text-anchor=\"end\">" << n2(smax * k / 4) << "</text>";
    double tmax = static_cast<double>(*std::max_element(ts.begin(), ts.end()));
    if (smax >= 1) {
        double tend = std::min(tmax, smax);
        o << "<line class=\"ideal\" x1=\"" << n2(px(1)) << "\" y1=\"" << n2(py(1)) << "\" x2=\"" << n2(px(tend))
          << "\" y2=\"" << n2(py(tend)) << "\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>";
    }
    int ly = top + 10;
    for (auto& [impl, pts] : lines) {
        std::string c = color(impl);
        o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\" points=\"";
        for (auto& [t, s] : pts) o << n2(px(static_cast<double>(t))) << "," << n2(py(s)) << " ";
        o << "\"/>";
        for (auto& [t, s] : pts)
            o << "<circle cx=\"" << n2(px(static_cast<double>(t))) << "\" cy=\"" << n2(py(s)) << "\" r=\"3\" fill=\"" << c
              << "\"><title>" << esc(impl) << " " << t << " threads: " << n2(s) << "x</title></circle>";
        o << "<rect x=\"" << left + w + 15 << "\" y=\"" << ly - 9 << "\" width=\"10\" height=\"10\" fill=\"" << c
          << "\"/><text x=\"" << left + w + 30 << "\" y=\"" << ly << "\">" << esc(impl) << "</text>";
        ly += 16;
    }
    o << "</svg><figcaption>speed-up over serial against thread count (dashed: ideal linear scaling, when it fits)</figcaption></figure>\n";
    return o.str();
}

std::string problem_section(const results& r, const problem& p) {
    auto cells = cells_of(r, p.name);
    std::ostringstream s;
    s << "<section class=\"problem\" id=\"" << esc(p.name) << "\"><h2>" << esc(p.title) << "</h2><p>" << esc(p.what);
    if (!p.size_note.empty()) s << " <em>(" << esc(p.size_note) << ")</em>";
    s << "</p>\n";
    std::vector<const cell*> ok;
    for (auto* c : cells)
        if (c->error.empty() && c->median > 0) ok.push_back(c);
    for (auto* c : cells)
        if (!c->error.empty())
            s << "<p class=\"error\">" << esc(c->impl) << " at " << c->threads << " threads FAILED: " << esc(c->error) << "</p>";
    s << hbar_chart(
        "chart-time", p.name, p.time_label + " (median of the reps; whiskers: min to max; shorter is better)", ok,
        [](const cell& c) { return c.median; }, [](const cell& c) { return c.min; }, [](const cell& c) { return c.max; },
        [](const cell& c) { return format_time(c.median) + (c.speedup > 0 ? "  (" + n2(c.speedup) + "x)" : ""); });
    if (r.cfg.threads.size() > 1) s << speedup_chart(r, p, ok);
    std::vector<const cell*> oh;
    for (auto* c : ok)
        if (c->has_overhead && !c->serial) oh.push_back(c);
    if (!oh.empty())
        s << hbar_chart(
            "chart-overhead", p.name, "per-task overhead, ns: (threads x median - serial) / tasks (shorter is better)", oh,
            [](const cell& c) { return std::max(0.0, c.overhead_ns); }, [](const cell&) { return 0.0; },
            [](const cell&) { return 0.0; }, [](const cell& c) { return format_num(c.overhead_ns, 1) + " ns"; });
    s << "</section>\n";
    return s.str();
}

std::string cells_table(const results& r) {
    std::ostringstream s;
    s << "<table class=\"cells\"><tr><th>problem</th><th>implementation</th><th>threads</th><th>median</th><th>min</th>"
         "<th>max</th><th>CPU</th><th>speed-up</th><th>ns/task</th><th>GB/s</th><th>peak RSS MiB</th><th>notes</th></tr>\n";
    for (auto& c : r.cells) {
        const problem* p = find_problem(r, c.problem);
        s << "<tr" << (c.error.empty() ? "" : " class=\"error\"") << "><td>" << esc(p ? p->title : c.problem) << "</td><td>"
          << esc(c.impl) << "</td><td>" << (c.serial ? 1 : c.threads) << "</td><td>"
          << (c.error.empty() ? format_time(c.median) : "FAILED") << "</td><td>" << format_time(c.min) << "</td><td>"
          << format_time(c.max) << "</td><td>" << (c.times.empty() ? "-" : format_time(c.cpu_median)) << "</td><td>" << (c.speedup > 0 ? n2(c.speedup) + "x" : "-") << "</td><td>"
          << (c.has_overhead ? format_num(c.overhead_ns, 1) : "-") << "</td><td>" << (c.gbps > 0 ? n2(c.gbps) : "-")
          << "</td><td>" << format_num(c.rss_mib, 1) << "</td><td>" << esc(extras_text(c)) << "</td></tr>\n";
    }
    s << "</table>\n";
    return s.str();
}

const char* style =
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}"
    "svg text{font:12px system-ui,sans-serif}figure{margin:1em 0}figcaption{color:#666;font-size:12px}"
    "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}"
    ".met{color:#1e8449;font-weight:bold}.missed{color:#c0392b;font-weight:bold}.notrun{color:#888}"
    ".error{color:#c0392b}section.problem{border-top:1px solid #ccc;margin-top:2em}code{background:#f4f4f4}";

const char* script =
    "window.addEventListener('load',function(){var n=0;document.querySelectorAll('svg.chart').forEach(function(s){"
    "var b=s.getBBox();if(b.width>0&&b.height>0&&s.querySelector('rect,polyline'))n++;});"
    "document.body.setAttribute('data-charts-rendered',String(n));});";

}  // namespace

bool write_html(const results& r, const std::string& path) {
    std::ofstream f(path);
    if (!f) {
        std::fprintf(stderr, "crew-bench: cannot write %s\n", path.c_str());
        return false;
    }
    f << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>crew-bench report</title><style>" << style
      << "</style><script>" << script << "</script></head><body data-charts-rendered=\"0\">\n";
    f << "<h1>crew-bench report</h1><p><b>Date:</b> " << esc(r.date) << "<br><b>Machine:</b> " << esc(r.machine)
      << "<br><b>Command:</b> <code>" << esc(r.cfg.command) << "</code><br><b>Mode:</b> "
      << (r.cfg.quick ? "quick" : "full") << ", " << r.cfg.reps << " reps per cell, total " << format_num(r.total_seconds, 1)
      << " s</p>\n";
    if (!r.notes.empty()) {
        f << "<ul class=\"notes\">";
        for (auto& n : r.notes) f << "<li>" << esc(n) << "</li>";
        f << "</ul>\n";
    }
    f << "<h2>Targets</h2><table class=\"targets\"><tr><th>status</th><th>target</th><th>measured</th></tr>\n";
    for (auto& t : r.targets)
        f << "<tr><td class=\"" << (!t.evaluated ? "notrun\">not run" : t.met ? "met\">met" : "missed\">MISSED") << "</td><td>"
          << esc(t.name) << "</td><td>" << esc(t.detail) << "</td></tr>\n";
    f << "</table>\n<p>";
    for (auto& p : r.problems) f << "<a href=\"#" << esc(p.name) << "\">" << esc(p.title) << "</a> ";
    f << "</p>\n";
    for (auto& p : r.problems) f << problem_section(r, p);
    f << "<section><h2>All cells</h2>" << cells_table(r)
      << "<p>CPU = process CPU time per run (all threads, median). speed-up = serial median / median. ns/task = (threads &times; median &minus; serial median) / tasks: the CPU "
         "time each task adds over the serial code.</p></section></body></html>\n";
    return static_cast<bool>(f);
}

}  // namespace crew_bench
