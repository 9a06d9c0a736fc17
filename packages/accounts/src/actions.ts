import type { ActionOutcome, DomainAction, JsonObject } from '@state-relay/rules';

/** active -> dormant; any other status is left as it is. Params are ignored. */
export const markDormant: DomainAction = (current: JsonObject): ActionOutcome => ({
  kind: 'update',
  value: current['status'] === 'active' ? { ...current, status: 'dormant' } : { ...current },
});

/** Any status -> closed. The account is kept (closing is not deleting). Params are ignored. */
export const closeAccount: DomainAction = (current: JsonObject): ActionOutcome => ({
  kind: 'update',
  value: { ...current, status: 'closed' },
});

export const accountActions: Record<string, DomainAction> = {
  mark_dormant: markDormant,
  close: closeAccount,
};
