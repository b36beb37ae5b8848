// Formatting helpers shared by the table, the targets and the HTML report.
#pragma once

#include <string>

#include "harness.hpp"

namespace crew_bench {

std::string format_time(double seconds);
std::string format_num(double v, int decimals);
std::string extras_text(const cell& c);
std::string json_escape(const std::string& s);
const problem* find_problem(const results& r, const std::string& name);
void add_note(std::vector<std::string>& notes, const std::string& note);

}  // namespace crew_bench
