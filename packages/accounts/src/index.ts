export { ACCOUNT_EVENT_TYPES, ACCOUNT_STATUSES } from './account';
export type { Account, AccountEventType, AccountStatus } from './account';
export { accountsDomain, DORMANCY_SWEEP, DORMANT_AFTER_MS } from './accounts-domain';
export { applyAccountEvent, validateAccountEvent } from './fold';
export { accountActions, closeAccount, markDormant } from './actions';
