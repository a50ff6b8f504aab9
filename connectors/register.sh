#!/usr/bin/env sh
# Registers every connector config in this folder with Kafka Connect's REST API.
# Usage: connectors/register.sh [CONNECT_URL]   (default http://localhost:8083)
set -eu
url="${1:-${CONNECT_URL:-http://localhost:8083}}"
dir="$(cd "$(dirname "$0")" && pwd)"
until curl -fsS "$url/connectors" >/dev/null 2>&1; do
  echo "waiting for Kafka Connect at $url ..."; sleep 2
done
for config in "$dir"/*.json; do
  name="$(sed -n 's/^ *"name": *"\([^"]*\)".*/\1/p' "$config" | head -1)"
  if curl -fsS "$url/connectors/$name" >/dev/null 2>&1; then
    echo "connector $name exists"
  else
    curl -fsS -X POST -H 'Content-Type: application/json' --data @"$config" "$url/connectors" >/dev/null
    echo "registered connector $name from $(basename "$config")"
  fi
done
