/** Bounds that keep hostile or accidental input from costing unbounded time, stack or SQL parameters. */
export const RULE_LIMITS = {
  /** Deepest nesting of conditions (the root is level 1), and of JSON values. */
  maxDepth: 32,
  /** Most condition nodes; every element of an `in` list counts as one node. */
  maxNodes: 1000,
  /** Most fields one action may name across set, unset and increment. */
  maxActionFields: 1000,
  /** Most segments in a dotted field path. */
  maxPathSegments: 8,
  /** Longest `$ago` duration, in days (about 10,000 years): any asOf minus it is still a valid Date. */
  maxDurationDays: 3_650_000,
} as const;
