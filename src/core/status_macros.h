// SPDX-License-Identifier: Apache-2.0
// RETURN_IF_ERROR and ASSIGN_OR_RETURN: the one family of macros Ferry uses to
// propagate absl::Status and absl::StatusOr across function boundaries.
#ifndef FERRY_CORE_STATUS_MACROS_H_
#define FERRY_CORE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define FERRY_STATUS_CONCAT_INNER_(a, b) a##b
#define FERRY_STATUS_CONCAT_(a, b) FERRY_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the enclosing function
// when it is not OK.
#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status ferry_status_ = (expr);         \
    if (!ferry_status_.ok()) return ferry_status_; \
  } while (false)

// ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>); on
// error returns its status, otherwise moves the value into `lhs`, which may be
// a declaration
// (`auto x`) or an existing variable.
#define ASSIGN_OR_RETURN(lhs, expr) \
  FERRY_ASSIGN_OR_RETURN_IMPL_(     \
      FERRY_STATUS_CONCAT_(ferry_statusor_, __LINE__), lhs, expr)

#define FERRY_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)  \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // FERRY_CORE_STATUS_MACROS_H_
