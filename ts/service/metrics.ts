/**
 * Prometheus metrics of the service (GET /metrics, text format 0.0.4), in a registry of its own
 * so that several services in one process (tests) do not collide:
 *
 *   parle_http_requests_total{route,method,status}        counter (status 499: the client went away first;
 *                                                          a response cut by an error after its status
 *                                                          went out counts with the error's status)
 *   parle_http_request_bytes_total{route}                  counter, body bytes read
 *   parle_http_response_bytes_total{route}                 counter, body bytes written
 *   parle_http_request_duration_seconds{route}             histogram, first byte in to last byte out
 *   parle_engine_pending                                   gauge, engine ops running or waiting
 *   parle_service_active_requests / _waiting_requests      gauges, the admission gate
 *   parle_service_admitted_requests_total{route}           counter, requests that got a turn on the engine
 *   parle_service_shed_requests_total{route,code}          counter, refused before the body was read
 *                                                          (503 OVERLOADED or QUEUE_FULL)
 *   parle_service_timed_out_requests_total{route}          counter, past the per-request timeout
 *   parle_service_failed_requests_total{route,code,status} counter, every request that ended in an
 *                                                          error, by its code (ABORTED with status 499:
 *                                                          the client went away; SLOW_BODY 408: too slow)
 *   parle_service_request_phase_seconds_total{route,phase} counter, where streamed requests' time went:
 *                                                          wait (admission gate), body (reading it; of
 *                                                          which body_client waiting for the client),
 *                                                          coding (awaiting the codec), send (held by
 *                                                          the socket); divide by the requests for means
 *   parle_service_expected_wait_seconds                    gauge, what a request arriving now would wait
 *   parle_service_rate_bytes_per_second                    gauge, the measured rate the estimate uses
 *   parle_service_wait_correction_ratio                    gauge, actual over predicted waits (learnt)
 *   parle_engine_path_total{op,path}                       counter, the path the engine chose
 *   parle_engine_worker_restarts_total                     counter, workers replaced
 * plus Node's process metrics (prefix parle_process_..., e.g. resident memory).
 * With `parle serve --processes N`, GET /metrics answers the sum of every process's registry
 * (ts/service/cluster.ts), plus parle_service_processes and parle_service_process_restarts_total.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Engine } from '../engine.js';
import type { AdmissionGate } from './admission.js';

/** The metrics one service records. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly bytesIn: Counter<'route'>;
  readonly bytesOut: Counter<'route'>;
  readonly duration: Histogram<'route'>;
  readonly paths: Counter<'op' | 'path'>;
  readonly admitted: Counter<'route'>;
  readonly shed: Counter<'route' | 'code'>;
  /** Seconds refusals were held back before their answer, past the pace (option shedRate). */
  readonly shedHeld: Counter<'route'>;
  readonly timedOut: Counter<'route'>;
  readonly failed: Counter<'route' | 'code' | 'status'>;
  readonly phases: Counter<'route' | 'phase'>;

  /** @internal the service makes its metrics */
  constructor(engine: Engine, gate: AdmissionGate) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'parle_http_requests_total',
      help: 'HTTP requests answered, by route, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.bytesIn = new Counter({
      name: 'parle_http_request_bytes_total',
      help: 'Request body bytes read',
      labelNames: ['route'],
      registers,
    });
    this.bytesOut = new Counter({
      name: 'parle_http_response_bytes_total',
      help: 'Response body bytes written',
      labelNames: ['route'],
      registers,
    });
    this.duration = new Histogram({
      name: 'parle_http_request_duration_seconds',
      help: 'Time from the request to the end of the response',
      labelNames: ['route'],
      // 1 ms .. ~65 s: a small sort to a 1 GiB stream.
      buckets: [0.001, 0.004, 0.016, 0.064, 0.25, 1, 4, 16, 64],
      registers,
    });
    this.paths = new Counter({
      name: 'parle_engine_path_total',
      help: 'Engine operations by the path the engine chose (cpu or gpu)',
      labelNames: ['op', 'path'],
      registers,
    });
    this.admitted = new Counter({
      name: 'parle_service_admitted_requests_total',
      help: 'Requests that got a turn on the engine (admission gate)',
      labelNames: ['route'],
      registers,
    });
    this.shed = new Counter({
      name: 'parle_service_shed_requests_total',
      help: 'Requests refused with 503 before their body was read (OVERLOADED: the expected wait passed maxWaitMs; QUEUE_FULL)',
      labelNames: ['route', 'code'],
      registers,
    });
    this.shedHeld = new Counter({
      name: 'parle_service_shed_held_seconds_total',
      help: 'Seconds refusals (503) were held back before their answer, past the pace (shedRate: clients asking again at once)',
      labelNames: ['route'],
      registers,
    });
    this.timedOut = new Counter({
      name: 'parle_service_timed_out_requests_total',
      help: 'Requests that took longer than the per-request timeout (timeoutMs)',
      labelNames: ['route'],
      registers,
    });
    this.failed = new Counter({
      name: 'parle_service_failed_requests_total',
      help: 'Requests that ended in an error, by code and status (499: the client went away first)',
      labelNames: ['route', 'code', 'status'],
      registers,
    });
    this.phases = new Counter({
      name: 'parle_service_request_phase_seconds_total',
      help: 'Seconds streamed requests spent at the admission gate (wait), reading the body (body; body_client: waiting for the client), awaiting the codec (coding) and held by the socket (send)',
      labelNames: ['route', 'phase'],
      registers,
    });
    new Gauge({
      name: 'parle_service_expected_wait_seconds',
      help: 'Seconds the work queued on the engine would take at the measured rate (queued bytes over the rate)',
      registers,
      collect() {
        this.set(gate.active < gate.maxActive ? 0 : gate.expectedWaitMs() / 1000);
      },
    });
    new Gauge({
      name: 'parle_service_rate_bytes_per_second',
      help: 'Body bytes per second the requests on the engine read while every turn was taken (the estimate of capacity)',
      registers,
      collect() {
        this.set(gate.bytesPerS.value);
      },
    });
    new Gauge({
      name: 'parle_service_wait_correction_ratio',
      help: 'Actual over predicted gate waits, the factor the estimate of the work ahead is scaled by',
      registers,
      collect() {
        this.set(gate.waitCorrection);
      },
    });
    new Gauge({
      name: 'parle_engine_pending',
      help: 'Engine operations running or waiting (engine queue depth)',
      registers,
      collect() {
        this.set(engine.pending);
      },
    });
    new Gauge({
      name: 'parle_service_active_requests',
      help: 'Requests working on the engine now',
      registers,
      collect() {
        this.set(gate.active);
      },
    });
    new Gauge({
      name: 'parle_service_waiting_requests',
      help: 'Requests waiting for a turn on the engine (service queue depth)',
      registers,
      collect() {
        this.set(gate.waiting);
      },
    });
    let restartsSeen = 0;
    new Counter({
      name: 'parle_engine_worker_restarts_total',
      help: 'CPU worker threads replaced after a crash or an abort',
      registers,
      collect() {
        const now = engine.workerRestarts;
        if (now > restartsSeen) this.inc(now - restartsSeen);
        restartsSeen = now;
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'parle_' });
  }
}
