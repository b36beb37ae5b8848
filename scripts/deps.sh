# scripts/deps.sh -- sourced by the other scripts: make sure Debian packages are installed.
#   ensure_packages pkg...   installs the missing ones when run as root, else prints the exact
#                            apt-get line and exits 1.

# Every Debian package any part of the build or test suite needs (one list, one place).
CREW_PACKAGES_BUILD="cmake ninja-build g++ libgtest-dev"
CREW_PACKAGES_TEST="clang libclang-rt-14-dev gdb relacy-dev"
CREW_PACKAGES_BENCH="libbenchmark-dev libtbb-dev libomp-dev chromium librust-tokio-dev libasio-dev"

ensure_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "crew needs these Debian packages; run:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
}
