// SPDX-License-Identifier: Apache-2.0
#include "api/json_writer.h"

#include <charconv>
#include <cmath>

namespace ferry {
void AppendJsonString(std::string* out, absl::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xf]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_->push_back(',');
    has_element_.back() = true;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_->push_back('{');
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_->push_back('}');
  has_element_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_->push_back('[');
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_->push_back(']');
  has_element_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(absl::string_view key) {
  Separate();
  AppendJsonString(out_, key);
  out_->push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(absl::string_view value) {
  Separate();
  AppendJsonString(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_->append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Separate();
  out_->append("null");
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  Separate();
  AppendShortestNumber(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t value) {
  Separate();
  AppendShortestNumber(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  Separate();
  if (std::isfinite(value)) {
    AppendShortestNumber(out_, value);
  } else {
    out_->append("null");
  }
  return *this;
}

JsonWriter& JsonWriter::Float(float value) {
  Separate();
  if (std::isfinite(value)) {
    AppendShortestNumber(out_, value);
  } else {
    out_->append("null");
  }
  return *this;
}

}  // namespace ferry
