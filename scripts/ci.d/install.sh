# Sourced by scripts/test.sh: install crew into a temporary prefix and build a find_package consumer.
prefix=$(mktemp -d)
cmake --install build/gcc --prefix "$prefix" >/dev/null
cmake -S tests/install -B build/install-check -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build/install-check >/dev/null
if ./build/install-check/consumer; then
  echo "find_package(crew) consumer: ok"; total_passed=$((total_passed + 1))
else
  echo "find_package(crew) consumer: FAILED"; total_failed=$((total_failed + 1))
fi
rm -rf "$prefix"
