// @state-relay/scanner/internal: the parts a Scanner wires together, for the scanner's tests, tools
// and the benchmark (bench/src/scanner/, which assembles one around its own database and broker).
// Not a stable API: embedders import @state-relay/scanner.
export { openScansDatabase } from './scanner';
export type { ScansDatabase } from './scanner';
export { ScanEngine } from './scans/scan-engine';
export { ScanStore } from './scans/scan-store';
export { CommandLagProbe } from './scans/command-lag';
export { CommandSender } from './scans/command-sender';
export { ScanRowsRetention } from './scans/scan-retention';
export type { ScanRowsRetentionOptions } from './scans/scan-retention';
export { COMMANDS_PER_BATCH, COMMANDS_PER_REQUEST } from './scans/scan-plan';
export { EngineScanService } from './scans/scan-service';
