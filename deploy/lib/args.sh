# shellcheck shell=bash
# Shared by the deploy scripts (sourced, bash): checking flag values before anything is
# installed or pushed, and showing a user's value in a message without its control
# characters. The checkers call the sourcing script's `bad MESSAGE` (exit 2).

# VALUE made safe to print: itself when it is printable ASCII without shell specials,
# else bash's $'...' quoting (an ESC shows as \E, a newline as \n).
shown() {
  if [[ "$1" =~ ^[A-Za-z0-9._/:=,+@%\ -]*$ ]]; then printf '%s' "$1"; else printf '%q' "$1"; fi
}

# --name: the agent's name rule, [A-Za-z0-9._-]{1,64}.
check_name() {  # FLAG VALUE
  [[ "$2" =~ ^[A-Za-z0-9._-]{1,64}$ ]] ||
    bad "$1: 1-64 characters of A-Z a-z 0-9 . _ -, got $(shown "$2")"
}

# --labels: the agent's rule (agent/labels.h): key=value[,key=value...], keys
# [A-Za-z0-9._-]{1,63}, values [A-Za-z0-9._:/+-]{0,63}; empty = no labels.
check_labels() {  # FLAG VALUE
  local item='[A-Za-z0-9._-]{1,63}=[A-Za-z0-9._:/+-]{0,63}'
  local re="^($item(,$item)*)?\$"
  [[ "$2" =~ $re ]] ||
    bad "$1: key=value[,key=value...] (keys A-Z a-z 0-9 . _ -; values also : / +), got $(shown "$2")"
}

# --coordinator: HOST:PORT, IP:PORT, [IPv6]:PORT or dns:[//DNS_SERVER_IP]/HOST:PORT,
# PORT 1-65535.
check_coordinator() {  # FLAG VALUE
  local re='^(dns:(//[A-Za-z0-9.:]*|//\[[0-9A-Fa-f:.]+\](:[0-9]+)?)?/)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})$'
  if [[ "$2" =~ $re ]] && [ "${BASH_REMATCH[5]}" -ge 1 ] && [ "${BASH_REMATCH[5]}" -le 65535 ]; then
    return 0
  fi
  bad "$1: HOST:PORT, IP:PORT, [IPv6]:PORT or dns:///HOST:PORT (PORT 1-65535), got $(shown "$2")"
}
