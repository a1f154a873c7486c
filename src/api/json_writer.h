// SPDX-License-Identifier: Apache-2.0
// JsonWriter: appends compact JSON to a string. Commas are placed
// automatically; the caller pairs Begin/End calls. Numbers use the shortest
// text that round-trips (std::to_chars); non-finite floats, which JSON cannot
// express, are written as null. Not thread-safe; one writer per response.
#ifndef FERRY_API_JSON_WRITER_H_
#define FERRY_API_JSON_WRITER_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ferry {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(absl::string_view key);

  JsonWriter& String(absl::string_view value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  JsonWriter& Int(int64_t value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Float(float value);  // shortest text that round-trips as float

 private:
  void Separate();

  std::string* out_;
  // One entry per open container: true once it has an element.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// Appends the shortest text that reads back as exactly `value`
// (std::to_chars): what JsonWriter writes for numbers, and what `ferry run`
// writes into CSV, so both print the same digits. Non-finite floats come out
// as nan, inf, -inf (JsonWriter writes null instead).
template <typename T>
void AppendShortestNumber(std::string* out, T value) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out->append(buf, ptr);
}

// Appends `s` as a quoted JSON string with escapes.
void AppendJsonString(std::string* out, absl::string_view s);

}  // namespace ferry

#endif  // FERRY_API_JSON_WRITER_H_
