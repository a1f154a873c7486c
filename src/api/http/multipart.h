// SPDX-License-Identifier: Apache-2.0
// A multipart/form-data parser (RFC 7578 over RFC 2046's multipart syntax),
// for file uploads (POST /v1/files). The body is parsed in place: each part's
// content is a view into the request body, so a 200 MB upload is not copied.
//
// What it accepts: a boundary of 1..70 characters from the Content-Type's
// `boundary` parameter (quoted or not); an optional preamble; parts separated
// by CRLF "--" boundary (a bare LF is accepted too, as some clients send
// one); each part's headers, of which Content-Disposition must be `form-data`
// with a `name` (and may have a `filename`); the closing "--" boundary "--"
// and an ignored epilogue. Header names are case-insensitive. Content-
// Transfer-Encoding is not supported (RFC 7578 deprecates it).
//
// Errors are INVALID_ARGUMENT naming the part (by number and, once known,
// field name) and what is wrong. Pure functions; safe for concurrent use.
#ifndef FERRY_API_HTTP_MULTIPART_H_
#define FERRY_API_HTTP_MULTIPART_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ferry {

struct MultipartPart {
  std::string name;                     // the form field's name
  std::optional<std::string> filename;  // set for file fields
  std::string content_type;             // empty when the part names none
  absl::string_view data;               // a view into the body
};

// The boundary of a `multipart/form-data; boundary=...` Content-Type value.
// INVALID_ARGUMENT if the media type is another one or the boundary is
// missing or malformed.
absl::StatusOr<std::string> MultipartBoundary(absl::string_view content_type);

// The parts of `body`, in order. Duplicate field names are an error.
absl::StatusOr<std::vector<MultipartPart>> ParseMultipartFormData(
    absl::string_view body, absl::string_view boundary);

}  // namespace ferry

#endif  // FERRY_API_HTTP_MULTIPART_H_
