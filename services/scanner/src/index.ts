export { buildApp, scannerServices } from './http/app';
export type { AppDeps } from './http/app';
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
export { openScansDatabase, Scanner } from './scanner';
export type { ScansDatabase } from './scanner';
export { ScanEngine } from './scans/scan-engine';
export { ScanStore } from './scans/scan-store';
export type { ScanService, ReplicaHealth } from './scans/scan-service';
export type { ScanView } from './scans/scan-view';
export type { ScanRecord, ScanSpec, ScanOptions, ScanStatus, ScanPhase } from './scans/scan';
// What the scanner's benchmark (bench/src/scanner/scan-bench.ts) assembles a scanner from.
export { CommandLagProbe } from './scans/command-lag';
export { CommandSender } from './scans/command-sender';
export { ScanRowsRetention } from './scans/scan-retention';
export type { ScanRowsRetentionOptions } from './scans/scan-retention';
export { COMMANDS_PER_BATCH, COMMANDS_PER_REQUEST } from './scans/scan-plan';
export { EngineScanService } from './scans/scan-service';
