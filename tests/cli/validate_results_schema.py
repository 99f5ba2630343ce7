#!/usr/bin/python3
"""Validates results documents against docs/results-schema.json (JSON Schema 2020-12).

usage: validate_results_schema.py SCHEMA FILE...
Exit 0 when every FILE is valid; 1 naming each file's errors otherwise; 2 on bad usage.
Needs Debian's python3-jsonschema (deploy/install-deps.sh test); run with /usr/bin/python3.
"""
import json
import sys

import jsonschema


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        for error in errors[:20]:
            where = "/".join(str(p) for p in error.absolute_path) or "(top)"
            print(f"{path}: {where}: {error.message}", file=sys.stderr)
        if errors:
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
