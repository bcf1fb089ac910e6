#!/usr/bin/env sh
# Starts the sandbox on a machine that has only Node.js and npm: installs Bun 1.4 through npm
# if needed, the locked dependencies, then the service on embedded SQLite (./data).
set -e
cd "$(dirname "$0")/.."
if ! command -v bun >/dev/null 2>&1 || ! bun --version | grep -q '^1\.4\.'; then
  npm install -g bun@1.4
fi
bun install --frozen-lockfile
exec bun run start
