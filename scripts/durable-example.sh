#!/usr/bin/env bash
# Runs the README's durable-agent commands (section "Durable agents on Restate") and checks what
# they print: the server and the example service started by the README's commands, a turn sent,
# its call listed as pending, approved, and the turn's answer read back.
set -euo pipefail
cd "$(dirname "$0")/.."

cleanup() {
  scripts/restate.sh stop || true
  [ -n "${service_pid:-}" ] && kill "$service_pid" 2>/dev/null || true
}
trap cleanup EXIT

scripts/restate.sh start
cargo run -q -p toolsmith-restate --example durable_agent &
service_pid=$!
scripts/restate.sh register http://127.0.0.1:9080
curl -s localhost:8080/AgentSession/conv-1/turn/send -H 'idempotency-key: turn-1' --json '{"prompt": "refund order 42"}'
echo
# A person reads `pending` before deciding; here, wait until the turn has reached the approval.
for _ in $(seq 1 100); do
  pending=$(curl -s -X POST localhost:8080/AgentSession/conv-1/pending)
  [ "$pending" != "[]" ] && break
  sleep 0.1
done
echo "pending: $pending"
echo "$pending" | grep -q '"tool_call_id":"refund-1"' || { echo "the call is not pending"; exit 1; }
curl -sf localhost:8080/AgentSession/conv-1/decide --json '{"tool_call_id": "refund-1", "approved": true}'
answer=$(curl -s localhost:8080/restate/invocation/AgentSession/conv-1/turn/turn-1/attach)
echo "answer: ${answer:0:120}..."
echo "$answer" | grep -q '"output":"The refund tool answered: order 42 refunded"' || { echo "unexpected answer"; exit 1; }
echo "the durable example ran as the README says"
