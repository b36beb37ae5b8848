// The object the tests' precompiled header is built for (tests/CMakeLists.txt, crew_test_pch).
