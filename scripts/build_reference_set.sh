#!/usr/bin/env bash
# Build the reference set: the full main track through lm-eval on every local
# system this machine can run (real GGUF models through llama.cpp, with prompt and
# memory-presentation variants).  Each run lands in runs/reference/<system>/.
# Usage: bash scripts/build_reference_set.sh [SYSTEM...]   (default: all, then pack)
# "agent-NAME" adds a reference agent; "pack" gzips runs/reference/* into
# selector/data/reference/ (the committed reference set).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=runs/reference
mkdir -p "$OUT" runs/tmp

run_system() {  # name model chat(yes|no) policy
  local name=$1 model=$2 chat=$3 policy=$4
  if [ -d "$OUT/$name" ]; then echo "skip $name (exists)"; return; fi
  local tmp="runs/tmp/$name" flags=()
  rm -rf "$tmp"
  [ "$chat" = yes ] && flags+=(--apply_chat_template)
  echo "== $name: $(date -u +%FT%TZ)"
  memrisk eval --model llama-cpp --model_args "model=$model,n_threads=${N_THREADS:-1}" --tasks memriskbench \
    --metadata "{\"memory_policy\": \"$policy\"}" "${flags[@]}" \
    --log_samples --output_path "$tmp"
  mv "$tmp/$model" "$OUT/$name"
  echo "== $name done: $(date -u +%FT%TZ)"
}

run_agent() {  # name agent
  local name=$1 agent=$2
  if [ -d "$OUT/$name" ]; then echo "skip $name (exists)"; return; fi
  rm -rf "runs/tmp/$name"
  memrisk eval --model memrisk-agent --model_args "agent=$agent,model=$name" --tasks memriskbench \
    --log_samples --output_path "runs/tmp/$name"
  mv "runs/tmp/$name/$name" "$OUT/$name"
}

ALL=(smollm2-135m-chat smollm2-135m-plain qwen2.5-coder-0.5b-chat qwen2.5-coder-0.5b-plain
     smollm2-135m-chat-recency3 pack)
for sys in "${@:-${ALL[@]}}"; do
  case $sys in
    smollm2-135m-chat) run_system "$sys" smollm2-135m yes full ;;
    smollm2-135m-plain) run_system "$sys" smollm2-135m no full ;;
    smollm2-135m-chat-recency3) run_system "$sys" smollm2-135m yes recency:3 ;;
    smollm2-135m-chat-bm25-3) run_system "$sys" smollm2-135m yes bm25:3 ;;
    smollm2-135m-chat-embedding3) run_system "$sys" smollm2-135m yes embedding:3 ;;
    qwen2.5-coder-0.5b-chat) run_system "$sys" qwen2.5-coder-0.5b yes full ;;
    qwen2.5-coder-0.5b-plain) run_system "$sys" qwen2.5-coder-0.5b no full ;;
    qwen2.5-coder-0.5b-chat-recency3) run_system "$sys" qwen2.5-coder-0.5b yes recency:3 ;;
    qwen2.5-coder-0.5b-chat-bm25-3) run_system "$sys" qwen2.5-coder-0.5b yes bm25:3 ;;
    qwen2.5-coder-0.5b-chat-embedding3) run_system "$sys" qwen2.5-coder-0.5b yes embedding:3 ;;
    agent-*) run_agent "$sys" "${sys#agent-}" ;;
    pack) python -c "from selector.reference import pack; import pathlib, sys; [print(p) for p in pack(sorted(pathlib.Path('$OUT').iterdir()))]" ;;
    *) echo "unknown system $sys" >&2; exit 2 ;;
  esac
done
