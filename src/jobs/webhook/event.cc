// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/event.h"

#include <openssl/sha.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/json_writer.h"

namespace ferry {
namespace {

void PathOrNull(JsonWriter& w, absl::string_view key, const std::string& path) {
  w.Key(key);
  if (path.empty()) {
    w.Null();
  } else {
    w.String(path);
  }
}

}  // namespace

std::string WebhookEventId(const WebhookEvent& event) {
  // The NUL keeps ("a", "bc") and ("ab", "c") apart; neither part holds one.
  const std::string key =
      absl::StrCat(event.job_id, std::string(1, '\0'), event.state);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(),
         digest);
  return absl::StrCat("evt_", absl::BytesToHexString(absl::string_view(
                                  reinterpret_cast<const char*>(digest), 16)));
}

std::string WebhookEventJson(const WebhookEvent& event) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("type").String(absl::StrCat("batch.", event.state));
  w.Key("id").String(WebhookEventId(event));
  w.Key("created_at").Int(absl::ToUnixSeconds(event.at));
  w.Key("data").BeginObject();
  w.Key("id").String(event.job_id);
  w.Key("status").String(event.state);
  w.Key("request_counts").BeginObject();
  w.Key("total").Int(event.total);
  w.Key("completed").Int(event.completed);
  w.Key("failed").Int(event.failed);
  w.EndObject();
  PathOrNull(w, "output_file", event.output_path);
  PathOrNull(w, "error_file", event.error_path);
  PathOrNull(w, "dead_letter_file", event.dead_letter_path);
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace ferry
