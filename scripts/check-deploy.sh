#!/usr/bin/env bash
# Checks deploy/ with promtool (installed by scripts/promtool.sh when missing): the alert rules
# (`promtool check rules`), their unit tests (`promtool test rules`), and every PromQL expression
# of the Grafana dashboard, parsed as recording rules with Grafana's variables filled in.
# Whether the metrics they name are exported is test/deploy/metrics.itest.ts's job.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/promtool.sh
promtool check rules deploy/prometheus/alerts.yml
promtool test rules deploy/prometheus/alerts.test.yml

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# JSON is YAML: one recording rule per panel target, variables replaced by values of their kind.
node -e '
const dashboard = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const fill = (expr) =>
  expr
    .replaceAll("$__rate_interval", "1m")
    .replace(/\$\{?(\w+)\}?/g, ".*"); // the instance variables, inside =~ matchers
const rules = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ record: `dashboard:panel_${p.id}_${t.refId}`, expr: fill(t.expr) })),
);
console.log(JSON.stringify({ groups: [{ name: "dashboard", rules }] }));
' deploy/grafana/state-relay.json >"$tmp/dashboard-queries.yml"
echo "deploy/grafana/state-relay.json: $(grep -o '"record"' "$tmp/dashboard-queries.yml" | wc -l) panel queries"
promtool check rules "$tmp/dashboard-queries.yml"
