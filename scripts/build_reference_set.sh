#!/usr/bin/env bash
# Build the reference set: the full main track through lm-eval on every local
# system this machine can run (real GGUF models through llama.cpp, under the default
# presentation with memory-policy variants, plus presentation/tool variants), the
# reference agents and the planted-weakness profiles.  Each run lands in
# runs/reference/<system>/.
# Usage: bash scripts/build_reference_set.sh [SYSTEM...]   (default: all, then pack)
# "agent-NAME" adds a reference agent, "weak-NAME" a planted-weakness profile
# (weak:NAME); "rescore" re-scores every run's logged replies with the installed
# scorer in place (same replies, current metrics: for runs logged by an older scorer
# version); "pack" gzips runs/reference/* into selector/data/reference/ (the committed
# reference set: the systems in REFERENCE only, whatever else runs/reference holds; the
# folder in selector/data/reference/ of a system not in REFERENCE is removed).
# DATASET=v7 runs every system on another packaged version instead of the default (v8)
# (the careful assistant replays tests/data/careful_assistant/replies_v7.jsonl, or
# CAREFUL_REPLIES=FILE); OUT=DIR writes the runs there instead of runs/reference.  With
# either set, the default list stops before "pack", which writes the committed set.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/reference}
DATASET=${DATASET:-}
case $DATASET in ""|v[0-9]|v[1-9][0-9]) ;; *) echo "DATASET must be a packaged version (v1 ... v10), not '$DATASET'" >&2; exit 2 ;; esac
EPISODES=${DATASET:+\"episodes\": \"$DATASET\", }  # a metadata entry, or nothing (the default)
CAREFUL_REPLIES=${CAREFUL_REPLIES:-tests/data/careful_assistant/replies_${DATASET:-v8}.jsonl}
mkdir -p "$OUT" runs/tmp runs/cache

run_system() {  # name model policy presentation tools
  local name=$1 model=$2 policy=$3 presentation=$4 tools=$5
  if [ -d "$OUT/$name" ]; then echo "skip $name (exists)"; return; fi
  local tmp="runs/tmp/$name"
  rm -rf "$tmp"
  echo "== $name: $(date -u +%FT%TZ)"
  # --use_cache: a run cut short continues where it stopped when the script is rerun
  memrisk eval --model llama-cpp --model_args "model=$model,n_threads=${N_THREADS:-2}" --tasks memriskbench \
    --metadata "{$EPISODES\"memory_policy\": \"$policy\", \"presentation\": \"$presentation\", \"tools\": \"$tools\"}" \
    --apply_chat_template --log_samples --use_cache "runs/cache/$name" --output_path "$tmp"
  mv "$tmp/$model" "$OUT/$name"
  echo "== $name done: $(date -u +%FT%TZ)"
}

run_agent() {  # name agent
  local name=$1 agent=$2
  if [ -d "$OUT/$name" ]; then echo "skip $name (exists)"; return; fi
  rm -rf "runs/tmp/$name"
  memrisk eval --model memrisk-agent --model_args "agent=$agent,model=$name" --tasks memriskbench \
    --metadata "{${EPISODES%, }}" --log_samples --output_path "runs/tmp/$name"
  mv "runs/tmp/$name/$name" "$OUT/$name"
}

QWEN=qwen2.5-coder-0.5b
QWEN15=qwen2.5-coder-1.5b
SMOL=smollm2-135m
# The planted profiles of the reference set (system name -> weak: spec): one per
# weakness family, at p < 1 so that they differ in strength (seeded: fixed outcomes).
declare -A WEAK=(
  [weak-churn1-p0.7]=churn1:p=0.7:seed=0 [weak-churn2-p0.9]=churn2:p=0.9:seed=0
  [weak-gap6-p0.8]=gap6:p=0.8:seed=0 [weak-scope-bleed-p0.6]=scope-bleed:p=0.6:seed=0
  [weak-indirect-p0.5]=indirect:p=0.5:seed=0 [weak-newest-wins-p0.9]=newest-wins:p=0.9:seed=0
  [weak-revoked-blind-p0.7]=revoked-blind:p=0.7:seed=0 [weak-decay4-p0.8]=decay4:p=0.8:seed=0
  [weak-decay8-p0.9]=decay8:p=0.9:seed=0
)
mapfile -t WEAK_NAMES < <(printf '%s\n' "${!WEAK[@]}" | sort)
# The committed reference set (dataset v8, render 4; 21 systems).  Also runnable by name, not in it: the
# embedding:3 policy run and the presentation/tool variants (README tables on v3).
REFERENCE=("$QWEN" "$SMOL" "$QWEN-recency3" "$QWEN-bm25-3" "$QWEN-mem0-3" "$QWEN15" "$QWEN15-recency3" "$QWEN15-mem0-3" careful-assistant
           agent-stale agent-leaky agent-constraint-blind "${WEAK_NAMES[@]}")
ALL=("${REFERENCE[@]}")
[ -n "$DATASET" ] || [ "$OUT" != runs/reference ] || ALL+=(pack)
for sys in "${@:-${ALL[@]}}"; do
  case $sys in
    "$QWEN") run_system "$sys" "$QWEN" full history text ;;
    "$SMOL") run_system "$sys" "$SMOL" full history text ;;
    "$QWEN15") run_system "$sys" "$QWEN15" full history text ;;
    "$QWEN15"-recency3) run_system "$sys" "$QWEN15" recency:3 history text ;;
    "$QWEN15"-mem0-3) run_system "$sys" "$QWEN15" mem0:3 history text ;;
    "$QWEN"-recency3) run_system "$sys" "$QWEN" recency:3 history text ;;
    "$QWEN"-bm25-3) run_system "$sys" "$QWEN" bm25:3 history text ;;
    "$QWEN"-embedding3) run_system "$sys" "$QWEN" embedding:3 history text ;;
    "$QWEN"-mem0-3) run_system "$sys" "$QWEN" mem0:3 history text ;;
    # presentation and tool variants (README tables; not in the default reference set)
    *-chatpres|*-session|*-native)
      base=${sys%-*}; variant=${sys##*-}
      case $variant in
        chatpres) run_system "$sys" "$base" full chat text ;;
        session) run_system "$sys" "$base" full session text ;;
        native) run_system "$sys" "$base" full history native ;;
      esac ;;
    agent-*) run_agent "$sys" "${sys#agent-}" ;;
    # replies written blind by a capable assistant (README "Capability range"), replayed
    careful-assistant) run_agent "$sys" "replay:$CAREFUL_REPLIES" ;;
    weak-*) [ -n "${WEAK[$sys]:-}" ] || { echo "unknown planted profile $sys" >&2; exit 2; }
            run_agent "$sys" "weak:${WEAK[$sys]}" ;;
    rescore)
      for dir in "$OUT"/*/; do
        memrisk rescore "$dir" > /dev/null
        for f in "$dir"samples_*.rescored-default-revised.jsonl; do mv "$f" "${f%.rescored-default-revised.jsonl}.jsonl"; done
      done ;;
    # only the reference systems: variants run by name also land in $OUT
    pack) python -c "from selector.reference import pack; import pathlib, sys; [print(p) for p in pack([pathlib.Path(sys.argv[1]) / n for n in sorted(sys.argv[2:])], prune=True)]" "$OUT" "${REFERENCE[@]}" ;;
    *) echo "unknown system $sys" >&2; exit 2 ;;
  esac
done
