// SPDX-License-Identifier: Apache-2.0
// CSV field splitting and writing (RFC 4180), shared by the scan (header row)
// and the CSV codec (rows, output lines). Internal to jobs/formats; pure
// functions.
#ifndef FERRY_JOBS_FORMATS_CSV_FIELDS_H_
#define FERRY_JOBS_FORMATS_CSV_FIELDS_H_

#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ferry::internal {

// Inline room for typical feature rows, so that splitting a row allocates
// nothing.
using CsvFields = absl::InlinedVector<absl::string_view, 64>;

// Splits one record into fields. A field is quoted when its first byte is a
// quote; inside, "" is a quote and newlines are data; bytes between a closing
// quote and the next comma are kept (as Python's csv module does). Unquoted
// fields are views into `text`; quoted ones are unescaped into `*storage`,
// which must outlive the views and not change while they are used.
// INVALID_ARGUMENT for a quote that is never closed.
absl::Status SplitCsvFields(absl::string_view text, std::string* storage,
                            CsvFields* fields);

// Appends `field`, quoted (with "" escapes) when it holds a comma, a quote, CR
// or LF, or starts or ends with a space.
void AppendCsvField(std::string* out, absl::string_view field);

// `s` without leading and trailing spaces and tabs.
absl::string_view TrimSpaces(absl::string_view s);

}  // namespace ferry::internal

#endif  // FERRY_JOBS_FORMATS_CSV_FIELDS_H_
