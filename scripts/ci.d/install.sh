# Sourced by scripts/test.sh: crew as a dependency, both ways: find_package(crew) after
# `cmake --install`, and add_subdirectory(crew).
consumer_check() {  # consumer_check <label> <build dir>
  if cmake --build "$2" >/dev/null && "./$2/consumer"; then
    echo "$1 consumer: ok"; total_passed=$((total_passed + 1))
  else
    echo "$1 consumer: FAILED"; total_failed=$((total_failed + 1))
  fi
}
prefix=$(mktemp -d)
cmake --install build/gcc --prefix "$prefix" >/dev/null
cmake -S tests/install -B build/install-check -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
consumer_check "find_package(crew)" build/install-check
cmake -S tests/subdirectory -B build/subdirectory-check -G Ninja -DCREW_SOURCE_DIR="$PWD" >/dev/null
consumer_check "add_subdirectory(crew)" build/subdirectory-check
rm -rf "$prefix"
