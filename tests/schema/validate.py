#!/usr/bin/env python3
"""Validates JSON documents (or JSON Lines, with --jsonl) against a JSON Schema.

    validate.py SCHEMA [FILE|DIR|-]... [--jsonl] [--min-results N] [--schema-ref]

Reads each FILE (default: stdin); a DIR stands for every *.json file under it,
recursively. With --schema-ref each document must also open with a "$schema"
key that, read relative to the document's own folder, names SCHEMA (what an
editor follows to complete and check the file). Exit codes: 0 valid, 1 invalid
(every error is printed with its file and JSON path), 2 usage or unreadable
input, 125 when python3-jsonschema is not installed (ctest's SKIP_RETURN_CODE).

Uses Debian's python3-jsonschema (apt-get install python3-jsonschema); the
validator class follows the schema's "$schema" (draft-04 for SARIF 2.1.0,
2020-12 for schemas/denpex-diagnosis.schema.json).
"""
import argparse
import json
import os
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


def expand(paths):
    """FILE and - as given; a DIR as its *.json files, sorted, recursively."""
    out = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            found = sorted(os.path.join(d, n) for d, _, names in os.walk(p) for n in names if n.endswith(".json"))
            if not found:
                raise OSError(f"{p}: no *.json file")
            out.extend(found)
        else:
            out.append(p)
    return out


def check_schema_ref(doc, path, schema_path, label):
    """The document opens with "$schema" naming schema_path relative to its folder."""
    if path == "-":
        print(f"{label}: --schema-ref needs files, not stdin", file=sys.stderr)
        return 1
    if not isinstance(doc, dict) or not doc or next(iter(doc)) != "$schema":
        print(f"{label}: /$schema: the first key must be \"$schema\"", file=sys.stderr)
        return 1
    ref = doc["$schema"]
    want = os.path.relpath(schema_path, os.path.dirname(os.path.abspath(path))).replace(os.sep, "/")
    if not isinstance(ref, str) or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), ref)) \
            != os.path.normpath(os.path.abspath(schema_path)):
        print(f"{label}: /$schema: {ref!r} does not name {schema_path}; write \"{want}\"", file=sys.stderr)
        return 1
    return 0


def read_docs(path, jsonl):
    """[(label, document)], or raises OSError/ValueError/UnicodeDecodeError."""
    if path == "-":
        text = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            text = f.read()
    # Output must be valid UTF-8: a printer that leaks a raw log byte fails here.
    text = text.decode("utf-8")
    docs = []
    if jsonl:
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                docs.append((f"{path}:{n}", json.loads(line)))
    else:
        docs.append((path, json.loads(text)))
    return docs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("schema")
    ap.add_argument("files", nargs="*", default=["-"], metavar="FILE")
    ap.add_argument("--jsonl", action="store_true", help="validate each line as its own document")
    ap.add_argument("--min-results", type=int, default=0,
                    help="SARIF: require at least N results in runs[0] (guards against an empty document)")
    ap.add_argument("--schema-ref", action="store_true",
                    help="each document's first key is \"$schema\", naming SCHEMA relative to the document")
    args = ap.parse_args()

    try:
        with open(args.schema, encoding="utf-8") as f:
            schema = json.load(f)
        files = expand(args.files)
    except (OSError, ValueError) as e:
        print(f"validate.py: {e}", file=sys.stderr)
        return 2

    cls = validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)

    bad = 0
    for path in files:
        try:
            docs = read_docs(path, args.jsonl)
        except OSError as e:
            print(f"validate.py: {e}", file=sys.stderr)
            return 2
        except UnicodeDecodeError as e:
            print(f"validate.py: {path}: not valid UTF-8: {e}", file=sys.stderr)
            bad += 1
            continue
        except ValueError as e:
            print(f"validate.py: {path}: not JSON: {e}", file=sys.stderr)
            bad += 1
            continue
        if not docs:
            print(f"validate.py: {path}: no JSON document", file=sys.stderr)
            bad += 1
            continue
        bad += sum(check(validator, doc, label) for label, doc in docs)
        if args.schema_ref:
            bad += sum(check_schema_ref(doc, path, args.schema, label) for label, doc in docs)
        if args.min_results and not args.jsonl:
            runs = docs[0][1].get("runs") or [{}]
            got = len(runs[0].get("results") or [])
            if got < args.min_results:
                print(f"{path}: /runs/0/results: {got} results, expected at least {args.min_results}",
                      file=sys.stderr)
                bad += 1
    if bad:
        print(f"validate.py: {bad} schema error(s) in {len(files)} file(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
