// tools/crew-trace/json.hpp -- a small strict JSON parser (numbers as double), for crew-trace and
// the trace tests.
// Throws std::runtime_error with the offset on malformed input.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace crew_trace::json {

struct value {
    enum class kind { null, boolean, number, string, array, object } type = kind::null;
    bool b = false;
    double n = 0;
    std::string s;
    std::vector<value> items;
    std::map<std::string, value> fields;

    bool has(const std::string& key) const { return type == kind::object && fields.count(key) != 0; }
    const value& operator[](const std::string& key) const {
        auto it = fields.find(key);
        if (type != kind::object || it == fields.end()) throw std::runtime_error("json: no field " + key);
        return it->second;
    }
};

class parser {
public:
    explicit parser(const std::string& text) : t_(text) {}
    value parse() {
        value v = parse_value();
        skip();
        if (i_ != t_.size()) fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const char* what) const {
        throw std::runtime_error(std::string("json: ") + what + " at offset " + std::to_string(i_));
    }
    void skip() {
        while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
    }
    char peek() {
        skip();
        if (i_ >= t_.size()) fail("unexpected end");
        return t_[i_];
    }
    void expect(char c) {
        if (peek() != c) fail("unexpected character");
        ++i_;
    }
    bool literal(const char* word) {
        std::string w(word);
        if (t_.compare(i_, w.size(), w) != 0) return false;
        i_ += w.size();
        return true;
    }
    std::string parse_string() {
        expect('"');
        std::string out;
        while (i_ < t_.size() && t_[i_] != '"') {
            char c = t_[i_++];
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= t_.size()) fail("bad escape");
            char e = t_[i_++];
            switch (e) {
            case '"': case '\\': case '/': out += e; break;
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'u':
                if (i_ + 4 > t_.size()) fail("bad \\u escape");
                out += static_cast<char>(std::strtol(t_.substr(i_, 4).c_str(), nullptr, 16));
                i_ += 4;
                break;
            default: fail("bad escape");
            }
        }
        if (i_ >= t_.size()) fail("unterminated string");
        ++i_;
        return out;
    }
    value parse_value() {
        value v;
        char c = peek();
        if (c == '{') {
            v.type = value::kind::object;
            ++i_;
            if (peek() == '}') { ++i_; return v; }
            for (;;) {
                std::string key = parse_string();
                expect(':');
                v.fields[key] = parse_value();
                if (peek() == ',') { ++i_; continue; }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.type = value::kind::array;
            ++i_;
            if (peek() == ']') { ++i_; return v; }
            for (;;) {
                v.items.push_back(parse_value());
                if (peek() == ',') { ++i_; continue; }
                expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.type = value::kind::string;
            v.s = parse_string();
            return v;
        }
        if (literal("true")) { v.type = value::kind::boolean; v.b = true; return v; }
        if (literal("false")) { v.type = value::kind::boolean; return v; }
        if (literal("null")) return v;
        const char* begin = t_.c_str() + i_;
        char* end = nullptr;
        v.n = std::strtod(begin, &end);
        if (end == begin) fail("bad value");
        i_ += static_cast<std::size_t>(end - begin);
        v.type = value::kind::number;
        return v;
    }

    const std::string& t_;
    std::size_t i_ = 0;
};

inline value parse(const std::string& text) { return parser(text).parse(); }

}  // namespace crew_trace::json
