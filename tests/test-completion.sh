#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bash completion (completions/collsim.bash.in, as configured in the build): sources it in
# bash, completes command lines against the built collsim and checks what it offers. TAP.
# Usage: test-completion.sh COMPLETION-SCRIPT, with COLLSIM_BIN (the collsim binary) in the
# environment. Where bash-completion is installed its loader is sourced first, as an
# interactive shell has it; the script itself needs only bash.
set -u

script=${1:?usage: test-completion.sh COMPLETION-SCRIPT}
collsim=${COLLSIM_BIN:?COLLSIM_BIN must name the collsim binary}

if ! complete -p >/dev/null 2>&1; then
    echo "1..0 # SKIP this bash has no programmable completion"
    exit 0
fi
for loader in /usr/share/bash-completion/bash_completion /etc/bash_completion; do
    if [ -f "$loader" ]; then
        # shellcheck disable=SC1090
        . "$loader" >/dev/null 2>&1
        break
    fi
done
# shellcheck disable=SC1090
. "$script" || {
    echo "1..1"
    echo "not ok 1 - sourcing $script"
    exit 1
}

# File names are offered beside topology names: complete in an empty folder.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

n=0
failures=0

# complete WORD... : the words of a command line (the last one is being completed, "" for an
# empty one) after the binary; prints what the completion offers, sorted, one per line.
complete_line() {
    COMP_WORDS=("$collsim" "$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _collsim
    printf '%s\n' "${COMPREPLY[@]}" | sort -u | sed '/^$/d'
}

# expect "DESCRIPTION" "EXPECTED (space-separated, sorted)" WORD...
expect() {
    local what=$1 want=$2
    shift 2
    local got
    got=$(complete_line "$@" | tr '\n' ' ' | sed 's/ $//')
    n=$((n + 1))
    if [ "$got" = "$want" ]; then
        echo "ok $n - $what"
    else
        echo "not ok $n - $what"
        echo "# words: collsim $*"
        echo "# want: $want"
        echo "# got:  $got"
        failures=$((failures + 1))
    fi
}

echo "1..17"
expect "--topo dgx-h1 offers the two DGX H100 topologies" "dgx-h100x4 dgx-h100x8" --topo dgx-h1
expect "--topo=dgx-h1, split at '=' as bash does" "dgx-h100x4 dgx-h100x8" --topo = dgx-h1
expect "topology names after a command" "hgx-h100x8-128n hgx-h100x8-12n-sharp hgx-h100x8-16n" \
    select --topo hgx-h100x8-1
expect "topo show completes topology names" "gb200-nvl72 gb200-nvl72-20rack-ib gb200-nvl72-2rack-ib" \
    topo show gb200
expect "plan -t is a topology" "dgx-a100x8" plan -t dgx-a
expect "run -t is a thread count, not a topology" "" -t dgx-
expect "the commands" "select" sel
expect "topo's commands" "check" topo ch
expect "select's flags" "--emit --exact" select --e
expect "run's flags (the default command)" "--textbook" --text
expect "--emit values" "nccl-measurements-csv nccl-tuner-csv" select --emit nccl-
expect "--algo names from collsim algos" "nvls nvls_tree" --algo nvls
expect "--op of run" "allgather allreduce alltoall" --op all
expect "--op of select adds all" "all allgather allreduce alltoall" select --op all

# Every topology collsim lists is offered for an empty --topo, and nothing else.
want=$("$collsim" topo list | awk 'NF { print $1 }' | sort -u | tr '\n' ' ' | sed 's/ $//')
expect "--topo offers every listed topology" "$want" --topo ""

# A topology may be a JSON file; traces are any file.
touch my.json mytrace.txt
mkdir mydir
expect "--topo completes JSON files and folders, not other files" "my.json mydir" --topo my
expect "validate completes trace files" "my.json mydir mytrace.txt" validate --topo dgx-h100x4 my

[ $failures -eq 0 ]
