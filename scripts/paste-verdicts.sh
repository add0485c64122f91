#!/usr/bin/env bash
# Refresh the generated verdict blocks of docs/REPLICATION.md (between `<!-- verdicts:ci -->` and
# `<!-- verdicts:paper -->` markers) from the committed report.json files, after a report was
# rebuilt: tests/docs_verdicts.rs renders them and prints each block that differs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
for _ in 1 2; do   # one block per pass: the test stops at the first that differs
  if cargo test --release --quiet --test docs_verdicts >"$out" 2>&1; then
    echo "docs/REPLICATION.md: verdict blocks up to date"; rm -f "$out"; exit 0
  fi
  python3 - "$out" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"'s (\w+) verdicts differ from .*?; paste:\n(.*?)\n  left:", t, re.S)
if not m:
    sys.exit("docs_verdicts failed without a block to paste:\n" + t[-2000:])
scale, want = m.group(1), m.group(2).rstrip("\n") + "\n"
doc = open("docs/REPLICATION.md").read()
o, c = f"<!-- verdicts:{scale} -->\n", f"<!-- /verdicts:{scale} -->"
i = doc.index(o) + len(o)
j = doc.index(c, i)
open("docs/REPLICATION.md", "w").write(doc[:i] + want + doc[j:])
print(f"docs/REPLICATION.md: {scale} verdict block refreshed")
PY
done
cargo test --release --quiet --test docs_verdicts >/dev/null 2>&1 || { echo "docs_verdicts still fails" >&2; exit 1; }
rm -f "$out"
