#!/usr/bin/env python3
"""Validates a JSON document (or JSON Lines, with --jsonl) against a JSON Schema.

    validate.py SCHEMA [FILE|-] [--jsonl] [--min-results N]

Reads FILE (default: stdin). Exit codes: 0 valid, 1 invalid (every error is
printed with its JSON path), 2 usage or unreadable input, 125 when
python3-jsonschema is not installed (ctest's SKIP_RETURN_CODE).

Uses Debian's python3-jsonschema (apt-get install python3-jsonschema); the
validator class follows the schema's "$schema" (draft-04 for SARIF 2.1.0,
2020-12 for schemas/denpex-diagnosis.schema.json).
"""
import argparse
import json
import sys

try:
    import jsonschema
    from jsonschema import validators
except ImportError:  # pragma: no cover - depends on the machine
    print("validate.py: python3-jsonschema is not installed; skipping", file=sys.stderr)
    sys.exit(125)


def path_of(error):
    return "/" + "/".join(str(p) for p in error.absolute_path)


def check(validator, doc, label):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    for e in errors:
        print(f"{label}: {path_of(e)}: {e.message}", file=sys.stderr)
    return len(errors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("schema")
    ap.add_argument("file", nargs="?", default="-")
    ap.add_argument("--jsonl", action="store_true", help="validate each line as its own document")
    ap.add_argument("--min-results", type=int, default=0,
                    help="SARIF: require at least N results in runs[0] (guards against an empty document)")
    args = ap.parse_args()

    try:
        with open(args.schema, encoding="utf-8") as f:
            schema = json.load(f)
        if args.file == "-":
            text = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                text = f.read()
    except (OSError, ValueError) as e:
        print(f"validate.py: {e}", file=sys.stderr)
        return 2

    # Output must be valid UTF-8: a printer that leaks a raw log byte fails here.
    try:
        text = text.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"validate.py: {args.file}: not valid UTF-8: {e}", file=sys.stderr)
        return 1

    cls = validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)

    docs = []
    try:
        if args.jsonl:
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    docs.append((f"{args.file}:{n}", json.loads(line)))
        else:
            docs.append((args.file, json.loads(text)))
    except ValueError as e:
        print(f"validate.py: {args.file}: not JSON: {e}", file=sys.stderr)
        return 1
    if not docs:
        print(f"validate.py: {args.file}: no JSON document", file=sys.stderr)
        return 1

    bad = sum(check(validator, doc, label) for label, doc in docs)
    if args.min_results and not args.jsonl:
        runs = docs[0][1].get("runs") or [{}]
        got = len(runs[0].get("results") or [])
        if got < args.min_results:
            print(f"{args.file}: /runs/0/results: {got} results, expected at least {args.min_results}",
                  file=sys.stderr)
            bad += 1
    if bad:
        print(f"validate.py: {bad} schema error(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
