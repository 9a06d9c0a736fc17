import type { Action, Condition } from '@state-relay/rules';
import { accountActions } from './actions';
import type { EntityDomain } from '@state-relay/domain';
import { applyAccountEvent, validateAccountEvent } from './fold';

/** The demo domain as the processor sees it. */
export const accountsDomain: EntityDomain = {
  name: 'accounts',
  validateEvent: validateAccountEvent,
  applyEvent: applyAccountEvent,
  domainActions: accountActions,
};

export const DORMANT_AFTER_MS = 30 * 24 * 60 * 60 * 1000;

/** The canonical sweep: every active account idle for more than 30 days before asOf becomes dormant. */
export const DORMANCY_SWEEP: { condition: Condition; action: Action } = {
  condition: {
    all: [
      { field: 'status', op: 'eq', value: 'active' },
      { field: 'lastActiveAt', op: 'lt', value: { $ago: 'P30D' } },
    ],
  },
  action: { domain: 'mark_dormant' },
};
