// SPDX-License-Identifier: Apache-2.0
// RenderPrometheus: Ferry's metrics as Prometheus text exposition format 0.0.4,
// rendered from a MetricsSnapshot passed in. The HTTP front-end's /metrics
// handler calls it with CollectMetrics(manager) (collect.h); tests call it with
// hand-built snapshots. A pure function with no state: safe for concurrent use.
//
// Every family has HELP and TYPE lines and is written once, with all its series
// together; a family with no series is left out (an empty snapshot renders as
// ""). Times are in seconds and sizes in rows or tensor elements (base units,
// as promtool's linter wants); the batcher's microsecond histograms are divided
// by 1e6, bounds and sums alike. Labels: model, version (the version number),
// priority (Triton's 1-based level; 1 is the highest), reason, state, le.
// Counters, gauges and histogram buckets appear with zero values as soon as the
// model version serves, so rates and alerts see every series from the start.
//
// Per model, version and priority:
//   ferry_enqueued_requests_total      counter   requests the batcher accepted
//   ferry_request_success_total        counter   accepted requests answered OK
//   ferry_request_failure_total        counter   accepted requests answered
//                                                with an error (any reason)
//   ferry_rejected_requests_total      counter   {reason}: requests turned
//   away,
//                                                by RejectReason (queue_full,
//                                                shutting_down, invalid_input,
//                                                timeout, deadline_infeasible,
//                                                engine_error); every reason is
//                                                always present
//   ferry_queue_timeouts_total         counter   queue timeouts (REJECT or
//                                                DELAY action)
//   ferry_queue_depth_requests         gauge     requests queued now
//   ferry_queue_depth_rows             gauge     rows queued now
//   ferry_queue_duration_seconds       histogram enqueue → dispatch, per
//   request ferry_request_duration_seconds     histogram enqueue → response,
//   per
//                                                successful request
// Per model and version:
//   ferry_execution_total              counter   batches run (Triton's
//                                                exec_count)
//   ferry_inference_rows_total         counter   rows in those batches
//   (Triton's
//                                                inference_count); average
//                                                batch = rows / executions
//   ferry_dispatch_total               counter   {reason}: batches by
//                                                DispatchReason (full,
//                                                preferred_size, delay_expired,
//                                                deadline, shape_break, drain)
//   ferry_batch_size_rows              histogram rows per batch
//   ferry_compute_duration_seconds     histogram engine time per batch
//   ferry_padding_elements_total       counter   padding added, in tensor
//                                                elements
//   ferry_batch_elements_total         counter   all batch input elements,
//                                                padding included; padding
//                                                waste = padding / batch
// Per model and version ("" for a model with no version):
//   ferry_model_state                  gauge     {state}: a state set, one
//   series
//                                                per state (LOADING, READY,
//                                                UNAVAILABLE, UNLOADED), 1 for
//                                                the current state and 0 for
//                                                the others, so `== 0` alerts
//                                                work and a state change never
//                                                makes a series vanish
//
// Failures vs rejections. Success and failure count the outcome of accepted
// requests: enqueued = success + failure + those still in flight. Rejections
// count the cause, wherever it struck: at admission (queue_full, invalid_input,
// and shutting_down or deadline_infeasible at Enqueue; such requests are in
// neither enqueued nor failure) or later (timeout, engine_error, and
// shutting_down or deadline_infeasible in the queue; these are in failure too).
// The batcher's statistics do not split a reason by when it struck, so failure
// carries no reason label rather than a made-up one.
#ifndef FERRY_METRICS_PROMETHEUS_TEXT_H_
#define FERRY_METRICS_PROMETHEUS_TEXT_H_

#include <string>

#include "metrics/metrics_snapshot.h"

namespace ferry {

// Content-Type of the rendered text.
inline constexpr char kPrometheusContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

// The whole exposition, ready to serve. Expects each histogram's count to equal
// the sum of its bucket counts, as HistogramSnapshot guarantees.
std::string RenderPrometheus(const MetricsSnapshot& snapshot);

}  // namespace ferry

#endif  // FERRY_METRICS_PROMETHEUS_TEXT_H_
