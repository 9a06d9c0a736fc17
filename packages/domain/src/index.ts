export type { EntityDomain, KeyedEvent } from './entity-domain';
