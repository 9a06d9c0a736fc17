// What an embedder builds a scanner from. Tests and the benchmark reach further through
// ./internal (@state-relay/scanner/internal).
export { buildApp, scannerServices } from './http/app';
export type { AppDeps } from './http/app';
export { loadConfig } from './config';
export { ConfigError } from '@state-relay/service-kit';
export type { ScannerConfig } from './config';
export {
  ERRORS,
  ScannerError,
  InvalidRequestError,
  ScanNotFoundError,
  ScanFinishedError,
  ReplicaBehindError,
} from './errors';
export type { ErrorCode, FieldIssue } from './errors';
export { createLogger } from './logger';
export { createScannerMetrics } from './metrics';
export type { ScannerMetrics } from './metrics';
export { Scanner } from './scanner';
export type { ScanService, ReplicaHealth } from './scans/scan-service';
export type { ScanView } from './scans/scan-view';
export type { ScanRecord, ScanSpec, ScanOptions, ScanStatus, ScanPhase } from './scans/scan';
export type { LatencyBudget } from './scans/latency-budget';
export type { PaceLimiter, PaceState } from './scans/command-pacer';
