#!/usr/bin/env bash
# Every source a new blind set must not use: the earlier sets'
# (docs/accuracy-sources.txt) and every issue thread the catalog, testdata,
# docs and tests cite (as owner/repo#N). One a line, sorted.
set -euo pipefail
cd "$(dirname "$0")/../.."
{
  grep -v '^#' docs/accuracy-sources.txt | sed '/^$/d'
  grep -rhoE 'https?://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(issues|pull|discussions)/[0-9]+' \
    signatures testdata docs tests src | sed -E 's#https?://github.com/##; s#/(issues|pull|discussions)/#\##'
  grep -rhoE '\b[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+' signatures testdata docs tests src
} | sort -u
