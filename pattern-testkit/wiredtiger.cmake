# The embedded test server's storage engine, WiredTiger, is C that secantus-wiredtiger-sys
# compiles with CMake in its build script. `.cargo/config.toml` points CMAKE_TOOLCHAIN_FILE here
# for builds in this workspace only: a crate that depends on pattern-runtime never builds it.
#
# WiredTiger's Release build compiles at -O2 (its CC_OPTIMIZE_LEVEL). The tests spend little of
# their time in it, and its build was the longest single step of CI: -O1 builds it faster.
set(CC_OPTIMIZE_LEVEL "-O1" CACHE STRING "CC optimization level")
