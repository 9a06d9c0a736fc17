export { buildApp, scannerServices } from './app';
export type { AppDeps } from './app';
export { loadConfig, ConfigError } from './config';
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
export { ScanEngine } from './scan-engine';
export { ScanStore } from './scan-store';
export type { ScanService, ReplicaHealth } from './scan-service';
export type { ScanView } from './scan-view';
export type { ScanRecord, ScanSpec, ScanOptions, ScanStatus, ScanPhase } from './scan';
// What the scanner's benchmark (bench/src/scanner/scan-bench.ts) assembles a scanner from.
export { CommandLagProbe } from './command-lag';
export { CommandSender } from './command-sender';
export { COMMANDS_PER_BATCH, COMMANDS_PER_REQUEST } from './scan-plan';
export { EngineScanService } from './scan-service';
