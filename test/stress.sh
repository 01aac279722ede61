#!/usr/bin/env bash
# Runs the whole suite (the README's `npm test`) RUNS times, each in a fresh clone of this
# repository's HEAD, every other run beside a second CPU-heavy job on the same cores (as a CI
# machine may be), and records every failure: run, file, test and message. A flaky test shows
# up here; fix its cause (a race, a timing assumption, a shared port or cache), not its timeout.
#
#   bash test/stress.sh [RUNS] [OUT_DIR] [FIRST]   # default 20 runs into ./stress-<date>/
#
# FIRST numbers the first run (default 1), so runs spread over several sittings keep alternating
# idle / beside the second job and append to one summary.txt. Creating OUT_DIR/stop ends the
# script after the run in progress.
#
# One run takes about 9-11 minutes on the 2-core VM (twice that beside the second job), so 20
# runs take about 5 hours. Needs what `.ci/run` installs (chromium for SwiftShader and the
# browser tests). Prints one line a run and a summary; exits 1 when any run failed.
set -uo pipefail
RUNS="${1:-20}"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${2:-$HERE/stress-$(date +%Y%m%d-%H%M%S)}"
FIRST="${3:-1}"
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)"
export VK_ICD_FILENAMES="${VK_ICD_FILENAMES:-/usr/lib/chromium/vk_swiftshader_icd.json}"
export PARLE_REQUIRE_GPU=1

# The second job: every core busy with a plain loop (niced as CI's neighbours are not).
hog_start() {
  HOG_PIDS=()
  for _ in $(seq "$(nproc)"); do
    node -e 'for (;;) { let x = 0; for (let i = 0; i < 1e8; i++) x += i; }' &
    HOG_PIDS+=("$!")
  done
}
hog_stop() { for p in "${HOG_PIDS[@]:-}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap hog_stop EXIT

failed_runs=0
done_runs=0
for run in $(seq "$FIRST" $((FIRST + RUNS - 1))); do
  if [ -e "$OUT/stop" ]; then echo "stopped before run $run ($OUT/stop)"; break; fi
  clone="$(mktemp -d)"
  git clone -q "$HERE" "$clone/parle"
  # node_modules from a fresh install each run would take minutes: link the one here (read-only use)
  ln -s "$HERE/node_modules" "$clone/parle/node_modules"
  loaded="idle"
  if (( run % 2 == 0 )); then loaded="beside a second job"; hog_start; fi
  start=$(date +%s)
  commit=$(git -C "$clone/parle" rev-parse --short HEAD)
  # (the dot reporter beside the json one: errors outside any test, such as an unhandled
  # rejection, fail the run but reach only the console, with their stack)
  (cd "$clone/parle" && npm test -- --reporter=dot --reporter=json --outputFile.json="$OUT/run-$run.json" >"$OUT/run-$run.log" 2>&1)
  status=$?
  if (( run % 2 == 0 )); then hog_stop; fi
  secs=$(( $(date +%s) - start ))
  summary=$(node -e '
    const fs = require("fs");
    let r;
    try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch { console.log("no report"); process.exit(0); }
    const fails = [];
    for (const f of r.testResults) {
      if (f.status === "failed" && f.assertionResults.every((a) => a.status !== "failed")) fails.push(`${f.name}: ${(f.message || "").split("\n")[0]}`);
      for (const a of f.assertionResults) if (a.status === "failed") fails.push(`${f.name} > ${a.fullName}: ${(a.failureMessages[0] || "").split("\n")[0]}`);
    }
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (fails.length ? "\n  " + fails.join("\n  ") : ""));
  ' "$OUT/run-$run.json")
  # a failed run: the first error vitest reported outside the tests (an unhandled rejection)
  if (( status != 0 )) && grep -q "Unhandled" "$OUT/run-$run.log"; then
    summary+=$'\n'"  outside any test: $(grep -m1 -A2 "Unhandled" "$OUT/run-$run.log" | tr -s ' \n' ' ' | cut -c1-300)"
  fi
  echo "run $run ($(date -u +%FT%TZ), $commit, $loaded, ${secs} s, exit $status): $summary" | tee -a "$OUT/summary.txt"
  (( status != 0 )) && failed_runs=$((failed_runs + 1))
  done_runs=$((done_runs + 1))
  rm -rf "$clone"
done
echo "$failed_runs of $done_runs runs failed; logs and reports in $OUT" | tee -a "$OUT/summary.txt"
(( failed_runs == 0 ))
