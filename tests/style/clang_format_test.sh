#!/usr/bin/env bash
# The tree keeps its format (.clang-format; docs/contributing.md): every tracked C++
# file (*.cc, *.h) is as clang-format leaves it. Prints each drifting file and the
# command that fixes it; exit 1 if any drifts, 2 if clang-format or the file list is
# unavailable (never a silent pass).
#   tests/style/clang_format_test.sh SOURCE_DIR [CLANG_FORMAT]
set -uo pipefail
src=${1:?usage: clang_format_test.sh SOURCE_DIR [CLANG_FORMAT]}
tool=${2:-clang-format}
command -v "$tool" >/dev/null 2>&1 || { echo "clang_format_test: $tool not found (deploy/install-deps.sh test installs it)" >&2; exit 2; }
cd "$src" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cc' '*.h')
else  # a source tarball: the same folders the repository tracks, build trees left out
  mapfile -t files < <(find . -path ./build -prune -o -path '*/node_modules' -prune -o \( -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
fi
[ "${#files[@]}" -gt 0 ] || { echo "clang_format_test: no C++ files found under $src" >&2; exit 2; }
# One clang-format for all files: each violation is reported as "FILE:LINE:COL: error:".
out=$("$tool" --dry-run -Werror --style=file "${files[@]}" 2>&1)
rc=$?
mapfile -t drift < <(printf '%s\n' "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*clang-format-violations.*/\1/p' | sort -u)
if [ "$rc" -ne 0 ] && [ "${#drift[@]}" -eq 0 ]; then
  echo "clang_format_test: $tool failed: $(printf '%s\n' "$out" | head -3)" >&2
  exit 2
fi
if [ "${#drift[@]}" -gt 0 ]; then
  printf 'not formatted: %s\n' "${drift[@]}"
  echo "${#drift[@]} of ${#files[@]} C++ files differ from .clang-format; fix: $tool -i ${drift[*]}"
  exit 1
fi
echo "all ${#files[@]} C++ files formatted ($("$tool" --version | head -1))"
