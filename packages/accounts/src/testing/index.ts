// Test and demo data for the accounts domain (`@state-relay/accounts/testing`): an oracle,
// a deterministic event stream and its PRNG. Not part of the domain the processor runs.
export { accountsOracle } from './oracle';
export { generateAccountEvents } from './generator';
export type { AccountEventsOptions } from './generator';
export { mulberry32 } from './prng';
